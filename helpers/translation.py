"""A small English -> Chinese translation task, generated from a seed, with the true word alignment.

Nothing is downloaded: a hand-written grammar of about 150 English words and phrases and their Chinese
makes every sentence pair, and records which Chinese tokens each English word produced.

The grammar (present simple only)
---------------------------------
Sentence kinds, with the Chinese word order they produce (``[]`` = optional, T = time, P = place):

=============  ======================================================  ==================================
kind           English                                                 Chinese
=============  ======================================================  ==================================
statement      S V O [P] [T] .                                         S [T] [P] V O 。
negative       S do/does not V O [P] [T] .                             S [T] 不 [P] V O 。  (有 -> 没有)
yes/no         Do/Does S V O [P] [T] ?                                 S [T] [P] V O 吗 ？
what           What do/does S V [P] [T] ?                              S [T] [P] V 什么 ？
who            Who V-s O [P] [T] ?                                     谁 [T] [P] V O ？
where          Where do/does S V O [T] ?                               S [T] 在 哪儿 V O ？
=============  ======================================================  ==================================

* Subjects: pronouns (I 我, you 你, we 我们, ...), names (Tom 汤姆, Lily 莉莉), "my" + a relative
  (my mother -> 我妈妈: kinship terms take no 的) or a friend (my friend -> 我的朋友), and "the" + [adjective]
  + a person or an animal (the big cat -> 大猫). Animals only eat, drink, like, see and want.
* Objects: a bare plural or mass noun (books 书, tea 茶), "the" + [adjective] + noun (the red book -> 红书),
  or a number + [adjective] + noun, where Chinese puts the noun's measure word after the number
  (three cats -> 三只猫, two books -> 两本书, a red apple -> 一个红苹果).
* The 二 / 两 rule: before a measure word "two" is 两 (两只猫); 二 only appears inside a larger number
  (twelve 十二, twenty 二十), which stays one token. Digits typed by a learner become words (3 -> three).
* Adjectives (big 大, small 小, red 红, black 黑, white 白, new 新, old 旧) go straight before the noun,
  never with 的, and only on animals and things ("old" only on things).
* Time and place phrases come at the end in English and before the verb in Chinese, time first
  (I drink tea at home every morning -> 我每天早上在家喝茶). 不 stands after the time and before the place.
* Negation: 不 for every verb, except 有 (have), which is negated with 没 (没有). A negative sentence
  has a bare or definite object (no number), except "do not have a ..." (-> 没有 + noun), and no "every"
  time phrase (我不是每天... is out of scope). "see" (看见, negated with 没) is never negated here.
* "a" becomes "an" before a vowel (an egg, an old chair). Contractions typed by a learner are expanded
  (doesn't -> does not).

The alignment rule
------------------
Every Chinese token is produced by exactly one English token; an English token produces zero or more
Chinese tokens. ``Pair.alignment[i]`` lists the indices of the Chinese tokens that English token i produced:

* content words -> their translation (cat -> 猫, drinks -> 喝, home -> 家);
* "the", "a" in "do not have a ...", "to" in "listen to", and "do/does" in negatives and wh-questions ->
  nothing (Chinese has no such word);
* a number -> the number and the measure word (three -> 三 只): the measure word is there because of the
  counting; "my" -> 我 (+ 的); "at/in" -> 在; "every" -> 每 天 (every morning -> 每 天 早上, morning -> 早上),
  but in "every day" day -> 天; "where" -> 在 哪儿; "not" -> 不 / 没;
* "do/does" opening a yes/no question -> 吗; the final "." / "?" -> 。 / ？.

Held-out combinations
---------------------
:data:`HELD_OUT` lists subject-verb, verb-object, adjective-noun and number-noun combinations. The training
split never contains one of them; the test split contains only sentences with at least one, so it measures
whether the model composes words it has seen in new combinations. Every word occurs in training, and in the
same role with other partners (a held-out verb-object pair keeps the object as the object of other verbs).
Measured with the recipe of ``benchmarks/translation_recipe.py``: held-out pairs that leave a word in one
context only (learn + math, when math is otherwise only liked) or an adjective on a noun it never had (big +
apple) were translated with the frequent partner instead; those are not in the list.

What it does not cover
----------------------
Tenses other than the present simple, aspect (了, 过, 在), 的-phrases with adjectives, demonstratives (那只),
plural subjects other than pronouns, objects that are pronouns, adverbs, conjunctions, several adjectives on
one noun, any word outside :func:`english_words`, and everything a real translator must cope with:
ambiguity, idiom, register. It is a toy with real words, not a model of Chinese.
"""

from __future__ import annotations

import difflib
import random
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from helpers.course import say
from helpers.tasks import BOS, EOS, FIRST_SYMBOL, PAD, Seq2SeqBatch

__all__ = [
    "HELD_OUT",
    "TRANSLATOR",
    "Pair",
    "Vocabulary",
    "TranslationTask",
    "SentenceError",
    "Translation",
    "make_pair",
    "generate_pair",
    "generate_pairs",
    "translation_task",
    "english_words",
    "chinese_tokens",
    "tokenize_english",
    "detokenize_chinese",
    "parse_sentence",
    "corpus_bleu",
    "translate_text",
    "measure_alignment",
]

# ---------------------------------------------------------------------------------------------- the lexicon


@dataclass(frozen=True)
class Noun:
    key: str
    singular: str
    plural: str
    zh: str
    measure: str | None  # None: a mass noun, never counted
    kind: str  # "animal", "person", "food", "drink", "thing", "subject" (a school subject), "media"


#: one noun per row; "-" in the measure column: a mass noun, never counted
_NOUN_TABLE = """
#  key       singular  plural     Chinese  measure  kind
   cat       cat       cats       猫       只       animal
   dog       dog       dogs       狗       只       animal
   bird      bird      birds      鸟       只       animal
   horse     horse     horses     马       匹       animal
   teacher   teacher   teachers   老师     个       person
   student   student   students   学生     个       person
   doctor    doctor    doctors    医生     个       person
   child     child     children   孩子     个       person
   apple     apple     apples     苹果     个       food
   egg       egg       eggs       鸡蛋     个       food
   banana    banana    bananas    香蕉     根       food
   fish      fish      fish       鱼       条       food
   rice      rice      rice       米饭     -        food
   bread     bread     bread      面包     -        food
   noodles   noodles   noodles    面条     -        food
   tea       tea       tea        茶       -        drink
   water     water     water      水       -        drink
   coffee    coffee    coffee     咖啡     -        drink
   milk      milk      milk       牛奶     -        drink
   book      book      books      书       本       thing
   letter    letter    letters    信       封       thing
   pen       pen       pens       笔       支       thing
   car       car       cars       车       辆       thing
   chair     chair     chairs     椅子     把       thing
   film      film      films      电影     部       media
   tv        tv        tv         电视     -        media
   music     music     music      音乐     -        subject
   chinese   chinese   chinese    中文     -        subject
   english   english   english    英文     -        subject
   math      math      math       数学     -        subject
"""
NOUNS: tuple[Noun, ...] = tuple(
    Noun(key, singular, plural, zh, None if measure == "-" else measure, kind)
    for key, singular, plural, zh, measure, kind in
    (row.split() for row in _NOUN_TABLE.splitlines() if row.strip() and not row.lstrip().startswith("#"))
)
NOUN = {n.key: n for n in NOUNS}

ADJECTIVES: dict[str, str] = {"big": "大", "small": "小", "red": "红", "black": "黑", "white": "白",
                              "new": "新", "old": "旧"}
#: which adjectives go with which kinds of noun
ADJECTIVE_KINDS: dict[str, tuple[str, ...]] = {
    "big": ("animal", "thing", "food"), "small": ("animal", "thing", "food"), "red": ("thing", "food"),
    "black": ("animal", "thing"), "white": ("animal", "thing"), "new": ("thing",), "old": ("thing",),
}
ADJ_NOUNS = {"apple", "banana", "cat", "dog", "bird", "horse", "book", "pen", "car", "chair"}

NUMBERS: dict[str, str] = {"a": "一", "one": "一", "two": "两", "three": "三", "four": "四", "five": "五",
                           "six": "六", "seven": "七", "eight": "八", "nine": "九", "ten": "十",
                           "twelve": "十二", "twenty": "二十"}
DIGITS: dict[str, str] = {"1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
                          "7": "seven", "8": "eight", "9": "nine", "10": "ten", "12": "twelve", "20": "twenty"}


@dataclass(frozen=True)
class Verb:
    key: str
    base: tuple[str, ...]  # English words of the base form ("listen", "to")
    third: tuple[str, ...]  # ... and of the third person singular
    zh: str
    objects: dict[str, tuple[str, ...]]  # "bare", "definite", "counted" -> noun keys


def _nouns(*kinds: str, countable: bool | None = None) -> tuple[str, ...]:
    return tuple(n.key for n in NOUNS
                 if n.kind in kinds and (countable is None or (n.measure is not None) == countable))


VERBS: tuple[Verb, ...] = (
    Verb("drink", ("drink",), ("drinks",), "喝", {"bare": _nouns("drink")}),
    Verb("eat", ("eat",), ("eats",), "吃", {"bare": _nouns("food"), "counted": ("apple", "egg", "banana", "fish")}),
    Verb("read", ("read",), ("reads",), "看", {"bare": ("book", "letter"), "definite": ("book", "letter"),
                                               "counted": ("book", "letter")}),
    Verb("like", ("like",), ("likes",), "喜欢", {"bare": _nouns("animal", "drink", "food", "subject", "media")
                                                 + ("book", "car")}),
    Verb("see", ("see",), ("sees",), "看见", {"definite": _nouns("animal", "person") + ("car",),
                                              "counted": _nouns("animal", "person") + ("car",)}),
    Verb("buy", ("buy",), ("buys",), "买", {"bare": _nouns("drink", "food"),
                                            "counted": _nouns("thing", "food", countable=True),
                                            "definite": _nouns("thing", countable=True)}),
    Verb("write", ("write",), ("writes",), "写", {"bare": ("letter", "book"), "counted": ("letter", "book")}),
    Verb("learn", ("learn",), ("learns",), "学", {"bare": _nouns("subject")}),
    Verb("speak", ("speak",), ("speaks",), "说", {"bare": ("chinese", "english")}),
    Verb("watch", ("watch",), ("watches",), "看", {"bare": ("tv", "film"), "counted": ("film",)}),
    Verb("listen", ("listen", "to"), ("listens", "to"), "听", {"bare": ("music",)}),
    Verb("have", ("have",), ("has",), "有", {"counted": _nouns("animal", "thing", countable=True)}),
    Verb("want", ("want",), ("wants",), "要", {"bare": _nouns("drink", "food"),
                                              "counted": _nouns("thing", "food", countable=True)}),
)
VERB = {v.key: v for v in VERBS}
ANIMAL_VERBS = ("eat", "drink", "like", "see", "want")


@dataclass(frozen=True)
class Subject:
    key: str
    words: tuple[str, ...]
    zh: tuple[tuple[str, int], ...]  # (Chinese token, index of the English word that produced it)
    third: bool  # takes "does" and the -s form


PRONOUNS: tuple[Subject, ...] = (
    Subject("i", ("i",), (("我", 0),), False),
    Subject("you", ("you",), (("你", 0),), False),
    Subject("he", ("he",), (("他", 0),), True),
    Subject("she", ("she",), (("她", 0),), True),
    Subject("we", ("we",), (("我们", 0),), False),
    Subject("they", ("they",), (("他们", 0),), False),
    Subject("tom", ("tom",), (("汤姆", 0),), True),
    Subject("lily", ("lily",), (("莉莉", 0),), True),
    Subject("mother", ("my", "mother"), (("我", 0), ("妈妈", 1)), True),
    Subject("father", ("my", "father"), (("我", 0), ("爸爸", 1)), True),
    Subject("brother", ("my", "brother"), (("我", 0), ("哥哥", 1)), True),
    Subject("sister", ("my", "sister"), (("我", 0), ("姐姐", 1)), True),
    Subject("friend", ("my", "friend"), (("我", 0), ("的", 0), ("朋友", 1)), True),
)

TIMES: dict[str, tuple[tuple[str, ...], tuple[tuple[str, int], ...]]] = {
    "every day": (("every", "day"), (("每", 0), ("天", 1))),
    "every morning": (("every", "morning"), (("每", 0), ("天", 0), ("早上", 1))),
    "every evening": (("every", "evening"), (("每", 0), ("天", 0), ("晚上", 1))),
    "today": (("today",), (("今天", 0),)),
    "in the morning": (("in", "the", "morning"), (("早上", 2),)),
    "at night": (("at", "night"), (("晚上", 1),)),
    "on sundays": (("on", "sundays"), (("星期天", 1),)),
    "at weekends": (("at", "weekends"), (("周末", 1),)),
}
PLACES: dict[str, tuple[tuple[str, ...], tuple[tuple[str, int], ...]]] = {
    "at home": (("at", "home"), (("在", 0), ("家", 1))),
    "at school": (("at", "school"), (("在", 0), ("学校", 1))),
    "in the park": (("in", "the", "park"), (("在", 0), ("公园", 2))),
    "in the kitchen": (("in", "the", "kitchen"), (("在", 0), ("厨房", 2))),
    "in the library": (("in", "the", "library"), (("在", 0), ("图书馆", 2))),
    "at the office": (("at", "the", "office"), (("在", 0), ("办公室", 2))),
    "in the garden": (("in", "the", "garden"), (("在", 0), ("花园", 2))),
    "in the restaurant": (("in", "the", "restaurant"), (("在", 0), ("饭馆", 2))),
}
KINDS: tuple[tuple[str, float], ...] = (("statement", 0.34), ("negative", 0.18), ("yes/no", 0.14),
                                        ("what", 0.12), ("who", 0.12), ("where", 0.10))

#: combinations that never occur in training; the test split has at least one in every sentence
HELD_OUT: frozenset[tuple[str, str, str]] = frozenset({
    ("subject-verb", "she", "learn"), ("subject-verb", "teacher", "drink"), ("subject-verb", "cat", "like"),
    ("subject-verb", "we", "watch"), ("subject-verb", "friend", "write"), ("subject-verb", "tom", "buy"),
    ("verb-object", "drink", "milk"), ("verb-object", "eat", "banana"), ("verb-object", "buy", "pen"),
    ("verb-object", "have", "chair"), ("verb-object", "like", "coffee"), ("verb-object", "want", "egg"),
    ("adjective-noun", "red", "book"), ("adjective-noun", "new", "pen"), ("adjective-noun", "old", "chair"),
    ("adjective-noun", "white", "car"),
    ("number-noun", "three", "book"), ("number-noun", "two", "pen"), ("number-noun", "five", "cat"),
    ("number-noun", "twelve", "egg"),
})

# ----------------------------------------------------------------------------------------------- pairs


@dataclass(frozen=True)
class Pair:
    """One sentence pair: English tokens, Chinese tokens, and which Chinese tokens each English token produced.

    ``alignment[i]`` = indices into ``tgt`` produced by ``src[i]`` (possibly empty); every target index
    appears in exactly one source token's tuple. ``combinations`` = the (kind, a, b) combinations it uses.
    """

    src: tuple[str, ...]
    tgt: tuple[str, ...]
    alignment: tuple[tuple[int, ...], ...]
    combinations: frozenset[tuple[str, str, str]] = field(default=frozenset(), compare=False)
    kind: str = field(default="statement", compare=False)

    @property
    def english(self) -> str:
        return detokenize_english(self.src)

    @property
    def chinese(self) -> str:
        return detokenize_chinese(self.tgt)

    def links(self) -> set[tuple[int, int]]:
        """The alignment as a set of (target index, source index) links."""
        return {(t, s) for s, targets in enumerate(self.alignment) for t in targets}


class _Builder:
    """English words appended in order; Chinese tokens collected in chunks that point at English indices."""

    def __init__(self) -> None:
        self.en: list[str] = []

    def add(self, words: Sequence[str], zh: Sequence[tuple[str, int]] = ()) -> list[tuple[str, int]]:
        start = len(self.en)
        self.en.extend(words)
        return [(token, start + i) for token, i in zh]

    def pair(self, chinese: Iterable[list[tuple[str, int]]], combinations: set, kind: str) -> Pair:
        zh = [item for chunk in chinese for item in chunk]
        alignment = tuple(tuple(t for t, (_, s) in enumerate(zh) if s == i) for i in range(len(self.en)))
        return Pair(tuple(self.en), tuple(token for token, _ in zh), alignment, frozenset(combinations), kind)


#: a noun phrase: (form, noun key, number or None, adjective or None); form is "bare", "definite" or "counted"
NounPhrase = tuple[str, str, "str | None", "str | None"]


def _noun_phrase(phrase: NounPhrase, *, negative_have: bool = False):
    """(English words, Chinese [(token, local index)], combinations) of an object or subject noun phrase."""
    form, key, number, adjective = phrase
    if key not in NOUN:
        raise ValueError(f"noun must be one of {sorted(NOUN)}; got {key!r}")
    noun = NOUN[key]
    combos: set[tuple[str, str, str]] = set()
    if adjective is not None and adjective not in _adjectives(noun):
        raise ValueError(f"adjective for {key!r} must be one of {_adjectives(noun)}; got {adjective!r}")
    if form == "bare":
        if number is not None or adjective is not None:
            raise ValueError(f"a bare noun takes no number or adjective; got {phrase}")
        return (noun.plural,), ((noun.zh, 0),), combos
    words: list[str] = []
    zh: list[tuple[str, int]] = []
    if form == "definite":
        words.append("the")
    elif form == "counted" and negative_have:
        words.append("a")  # "do not have a cat" -> 没有猫: "a" produces nothing
    elif form == "counted":
        if number not in NUMBERS or noun.measure is None:
            raise ValueError(f"a counted {key!r} needs a number of {sorted(NUMBERS)}; got {number!r}")
        words.append(number)
        zh += [(NUMBERS[number], 0), (noun.measure, 0)]
        combos.add(("number-noun", "one" if number == "a" else number, noun.key))
    else:
        raise ValueError(f"form must be 'bare', 'definite' or 'counted'; got {form!r}")
    if adjective is not None:
        zh.append((ADJECTIVES[adjective], len(words)))
        words.append(adjective)
        combos.add(("adjective-noun", adjective, noun.key))
    plural = form == "counted" and not negative_have and words[0] not in ("a", "one")
    zh.append((noun.zh, len(words)))
    words.append(noun.plural if plural else noun.singular)
    if words[0] == "a" and words[1][0] in "aeiou":
        words[0] = "an"  # an egg, an old chair: the same 一 as "a"
    return tuple(words), tuple(zh), combos


def _adjectives(noun: Noun) -> list[str]:
    return [a for a, kinds in ADJECTIVE_KINDS.items() if noun.kind in kinds] if noun.key in ADJ_NOUNS else []


def _draw_phrase(rng: random.Random, form: str, key: str) -> NounPhrase:
    number = rng.choice(tuple(NUMBERS)) if form == "counted" else None
    adjectives = _adjectives(NOUN[key]) if form != "bare" else []
    adjective = rng.choice(adjectives) if adjectives and rng.random() < 0.4 else None
    return (form, key, number, adjective)


SUBJECT = {s.key: s for s in PRONOUNS}


def make_pair(kind: str, subject: str | NounPhrase, verb: str, obj: NounPhrase | None = None,
              place: str | None = None, time: str | None = None) -> Pair:
    """The pair for explicit choices, e.g. ``make_pair("statement", "i", "drink", ("bare", "tea", None, None),
    "at home", "every morning")`` -> I drink tea at home every morning. / 我每天早上在家喝茶。

    ``subject`` is a pronoun key (:data:`PRONOUNS`: "i", "she", "tom", "mother", ...) or a definite noun phrase
    ("definite", "cat", None, "big"); ``obj`` is None only for ``kind="what"``. Raises ValueError for a choice
    the grammar does not allow.
    """
    if kind not in dict(KINDS):
        raise ValueError(f"kind must be one of {[k for k, _ in KINDS]}; got {kind!r}")
    if verb not in VERB:
        raise ValueError(f"verb must be one of {sorted(VERB)}; got {verb!r}")
    v_entry = VERB[verb]
    if isinstance(subject, str):
        if subject not in SUBJECT:
            raise ValueError(f"subject must be one of {sorted(SUBJECT)} or a noun phrase; got {subject!r}")
        subj, subject_combos = SUBJECT[subject], set()
    else:
        if subject[0] != "definite" or NOUN.get(subject[1], NOUNS[0]).kind not in ("animal", "person"):
            raise ValueError(f"a noun subject must be ('definite', an animal or a person, None, adjective); "
                             f"got {subject}")
        words, zh, subject_combos = _noun_phrase(subject)
        subj = Subject(subject[1], words, zh, True)
        if NOUN[subject[1]].kind == "animal" and verb not in ANIMAL_VERBS:
            raise ValueError(f"an animal subject takes one of the verbs {ANIMAL_VERBS}; got {verb!r}")
    if (kind == "negative" and verb == "see") or (kind == "where" and verb == "have"):
        raise ValueError(f"the grammar has no {kind} sentence with {verb!r}")
    if verb == "have" and (place or time):
        raise ValueError("'have' takes no place or time phrase")
    if place is not None and (place not in PLACES or kind == "where"):
        raise ValueError(f"place must be one of {sorted(PLACES)} (none in 'where' questions); got {place!r}")
    if time is not None and (time not in TIMES or (kind == "negative" and time.startswith("every"))):
        raise ValueError(f"time must be one of {sorted(TIMES)} (no 'every' in negatives); got {time!r}")
    combos = set(subject_combos) | {("subject-verb", subj.key, verb)}
    if kind == "what":
        if obj is not None:
            raise ValueError(f"a 'what' question has no object (what is the object); got {obj}")
        obj_words, obj_zh = (), ()
    else:
        if obj is None or obj[0] not in v_entry.objects or obj[1] not in v_entry.objects[obj[0]]:
            raise ValueError(f"obj of {verb!r} must be (form, noun, ...) with {v_entry.objects}; got {obj}")
        if kind == "negative" and obj[0] == "counted" and verb != "have":
            raise ValueError("a negative sentence takes no counted object (except 'do not have a ...')")
        obj_words, obj_zh, obj_combos = _noun_phrase(obj, negative_have=kind == "negative")
        combos |= obj_combos | {("verb-object", verb, obj[1])}
    if place:
        combos.add(("verb-place", verb, place))

    b = _Builder()
    do = "does" if subj.third else "do"
    question = "." if kind in ("statement", "negative") else "?"
    if kind == "who":
        combos -= set(subject_combos) | {("subject-verb", subj.key, verb)}  # "who" is the subject
        who = b.add(["who"], [("谁", 0)])
        v = b.add(v_entry.third, [(v_entry.zh, 0)])
        s: list[tuple[str, int]] = []
    elif kind in ("what", "where"):
        wh = b.add([kind], [("什么", 0)] if kind == "what" else [("在", 0), ("哪儿", 0)])
        b.add([do])
        s = b.add(subj.words, subj.zh)
        v = b.add(v_entry.base, [(v_entry.zh, 0)])
    elif kind == "yes/no":
        ma = b.add([do], [("吗", 0)])
        s = b.add(subj.words, subj.zh)
        v = b.add(v_entry.base, [(v_entry.zh, 0)])
    elif kind == "negative":
        s = b.add(subj.words, subj.zh)
        b.add([do])
        neg = b.add(["not"], [("没" if verb == "have" else "不", 0)])
        v = b.add(v_entry.base, [(v_entry.zh, 0)])
    else:
        s = b.add(subj.words, subj.zh)
        v = b.add(v_entry.third if subj.third else v_entry.base, [(v_entry.zh, 0)])
    o = b.add(obj_words, obj_zh)
    p = b.add(*PLACES[place]) if place else []
    t = b.add(*TIMES[time]) if time else []
    end = b.add([question], [("？" if question == "?" else "。", 0)])
    chunks = {
        "who": [who, t, p, v, o, end] if kind == "who" else None,
        "what": [s, t, p, v, wh, end] if kind == "what" else None,
        "where": [s, t, wh, v, o, end] if kind == "where" else None,
        "yes/no": [s, t, p, v, o, ma, end] if kind == "yes/no" else None,
        "negative": [s, t, neg, p, v, o, end] if kind == "negative" else None,
        "statement": [s, t, p, v, o, end],
    }[kind]
    return b.pair(chunks, combos, kind)


def generate_pair(rng: random.Random) -> Pair:
    """One sentence pair drawn with ``rng`` (a ``random.Random``) from the grammar of the module docstring."""
    kind = rng.choices([k for k, _ in KINDS], weights=[w for _, w in KINDS])[0]
    if rng.random() < 0.55:
        subject: str | NounPhrase = rng.choice(PRONOUNS).key
        animal = False
    else:
        subject = _draw_phrase(rng, "definite", rng.choice(_nouns("animal", "person")))
        animal = NOUN[subject[1]].kind == "animal"
    verbs = [v for v in VERBS if not animal or v.key in ANIMAL_VERBS]
    if kind == "negative":
        verbs = [v for v in verbs if v.key != "see"]
    if kind == "where":
        verbs = [v for v in verbs if v.key != "have"]
    verb = rng.choice(verbs)
    forms = [f for f in verb.objects if not (kind == "negative" and f == "counted" and verb.key != "have")]
    form = rng.choice(forms)
    obj = None if kind == "what" else _draw_phrase(rng, form, rng.choice(verb.objects[form]))
    place = None if verb.key == "have" or kind == "where" or rng.random() < 0.5 else rng.choice(tuple(PLACES))
    times = [t for t in TIMES if not (kind == "negative" and t.startswith("every"))]
    time = None if verb.key == "have" or rng.random() < 0.5 else rng.choice(times)
    return make_pair(kind, subject, verb.key, obj, place, time)


def _held_out(pair: Pair) -> bool:
    return bool(pair.combinations & HELD_OUT)


def generate_pairs(n: int, seed: int, *, held_out: bool | None = None, exclude: Iterable[Pair] = ()) -> list[Pair]:
    """``n`` distinct pairs from ``seed``; ``held_out=True`` keeps only those with a :data:`HELD_OUT` combination,
    ``False`` only those without, ``None`` all. Pairs whose English is in ``exclude`` are skipped."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int; got {n!r}")
    rng = random.Random(seed)
    seen = {p.src for p in exclude}
    pairs: list[Pair] = []
    for _ in range(200 * n + 1000):
        if len(pairs) == n:
            break
        pair = generate_pair(rng)
        if pair.src in seen or (held_out is not None and _held_out(pair) != held_out):
            continue
        seen.add(pair.src)
        pairs.append(pair)
    if len(pairs) < n:
        raise ValueError(f"the grammar gave only {len(pairs)} distinct pairs of the {n} asked for")
    return pairs


# --------------------------------------------------------------------------------------------- tokens


def english_words() -> frozenset[str]:
    """Every English token the grammar can produce (lower case, with "." and "?")."""
    words = {"who", "what", "where", "do", "does", "not", "the", "an", ".", "?"} | set(NUMBERS) | set(ADJECTIVES)
    for n in NOUNS:
        words |= {n.singular, n.plural}
    for v in VERBS:
        words |= set(v.base) | set(v.third)
    for s in PRONOUNS:
        words |= set(s.words)
    for phrase, _ in (*TIMES.values(), *PLACES.values()):
        words |= set(phrase)
    return frozenset(words)


def chinese_tokens() -> frozenset[str]:
    """Every Chinese token the grammar can produce."""
    tokens = {"吗", "不", "没", "谁", "什么", "在", "哪儿", "。", "？"}
    tokens |= set(NUMBERS.values()) | set(ADJECTIVES.values())
    tokens |= {n.zh for n in NOUNS} | {n.measure for n in NOUNS if n.measure} | {v.zh for v in VERBS}
    for s in PRONOUNS:
        tokens |= {t for t, _ in s.zh}
    for _, zh in (*TIMES.values(), *PLACES.values()):
        tokens |= {t for t, _ in zh}
    return frozenset(tokens)


def tokenize_english(text: str) -> list[str]:
    """Lower-cased words and the punctuation marks . ? as separate tokens (no checking: see :func:`parse_sentence`)."""
    return re.findall(r"[a-z0-9]+|[.?]", text.lower())


def detokenize_english(tokens: Sequence[str]) -> str:
    text = " ".join(tokens).replace(" .", ".").replace(" ?", "?")
    return text[:1].upper() + text[1:].replace(" i ", " I ") if text else text


def detokenize_chinese(tokens: Sequence[str]) -> str:
    """Chinese is written without spaces: 猫 / 吃 / 什么 / ？ -> 猫吃什么？"""
    return "".join(tokens)


class Vocabulary:
    """One id space for both languages (the model shares one embedding table): PAD, BOS, EOS, English, Chinese."""

    def __init__(self, english: Iterable[str], chinese: Iterable[str]) -> None:
        self.english = sorted(english)
        self.chinese = sorted(chinese)
        self.tokens = ["<pad>", "<bos>", "<eos>", *self.english, *self.chinese]
        assert len(self.tokens) - FIRST_SYMBOL == len(set(self.english) | set(self.chinese))
        self.index = {token: i for i, token in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        unknown = [t for t in tokens if t not in self.index or self.index[t] < FIRST_SYMBOL]
        if unknown:
            raise ValueError(f"tokens must be in the vocabulary; unknown: {unknown}")
        return [self.index[t] for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Token ids -> tokens, stopping at EOS and skipping PAD and BOS."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS:
                break
            if i in (PAD, BOS):
                continue
            if not 0 <= i < len(self.tokens):
                raise ValueError(f"ids must be in [0, {len(self.tokens)}); got {i}")
            out.append(self.tokens[i])
        return out


# ---------------------------------------------------------------------------------------------- the task


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """sacrebleu's corpus BLEU with its Chinese tokenizer (``tokenize="zh"``), on detokenised strings, 0..100."""
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"hypotheses and references must have the same length; got {len(hypotheses)}, "
                         f"{len(references)}")
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)], tokenize="zh").score)


@dataclass
class TranslationTask:
    """The data of :func:`translation_task`: splits of :class:`Pair`, the vocabulary, batching and scoring."""

    vocab: Vocabulary
    train: list[Pair]
    valid: list[Pair]  # unseen sentences without held-out combinations (for early stopping)
    test: list[Pair]  # unseen sentences each with at least one held-out combination
    seed: int

    @property
    def max_src_len(self) -> int:
        return max(len(p.src) for p in (*self.train, *self.valid, *self.test))

    @property
    def max_tgt_len(self) -> int:
        """The longest Chinese sentence + 1 (for EOS): the decoding budget."""
        return max(len(p.tgt) for p in (*self.train, *self.valid, *self.test)) + 1

    def encode_source(self, sentences: Sequence[Sequence[str]]) -> Tensor:
        """Token lists -> src (batch, L_src) ids, PAD-padded."""
        length = max(len(s) for s in sentences)
        return torch.tensor([self.vocab.encode(s) + [PAD] * (length - len(s)) for s in sentences])

    def batch(self, pairs: Sequence[Pair]) -> Seq2SeqBatch:
        """src (batch, L_src); tgt_in = BOS + Chinese, tgt_out = Chinese + EOS, both (batch, L_tgt + 1)."""
        if not pairs:
            raise ValueError("pairs must not be empty")
        src = self.encode_source([p.src for p in pairs])
        length = max(len(p.tgt) for p in pairs) + 1
        tgt_out = torch.full((len(pairs), length), PAD)
        tgt_in = torch.full((len(pairs), length), PAD)
        for row, p in enumerate(pairs):
            ids = self.vocab.encode(p.tgt)
            tgt_out[row, : len(ids) + 1] = torch.tensor(ids + [EOS])
            tgt_in[row, : len(ids) + 1] = torch.tensor([BOS] + ids)
        return Seq2SeqBatch(src, tgt_in, tgt_out)

    def sampler(self, batch_size: int, seed: int = 0) -> Callable[[], Seq2SeqBatch]:
        """A ``next_batch`` for :func:`helpers.training.train`: shuffled passes over the training split."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1; got {batch_size}")
        rng = random.Random(seed)
        order: list[int] = []

        def next_batch() -> Seq2SeqBatch:
            nonlocal order
            if len(order) < batch_size:
                fresh = list(range(len(self.train)))
                rng.shuffle(fresh)
                order += fresh
            chosen, order = order[:batch_size], order[batch_size:]
            return self.batch([self.train[i] for i in chosen])

        return next_batch

    @torch.no_grad()
    def translate(self, model: torch.nn.Module, pairs_or_sentences: Sequence, *, batch_size: int = 500
                  ) -> list[list[str]]:
        """Greedy translations (Chinese token lists) of pairs or English token lists."""
        sentences = [p.src if isinstance(p, Pair) else tuple(p) for p in pairs_or_sentences]
        was_training = model.training
        model.eval()
        out: list[list[str]] = []
        for start in range(0, len(sentences), batch_size):
            src = self.encode_source(sentences[start: start + batch_size])
            decoded = model.greedy_decode(src, self.max_tgt_len + 2)
            out += [self.vocab.decode(row) for row in decoded.tolist()]
        model.train(was_training)
        return out

    def score(self, model: torch.nn.Module, pairs: Sequence[Pair]) -> dict[str, float]:
        """Exact match (fraction of sentences translated token for token right) and sacrebleu BLEU (zh)."""
        predicted = self.translate(model, pairs)
        exact = sum(list(p.tgt) == q for p, q in zip(pairs, predicted)) / len(pairs)
        bleu = corpus_bleu([detokenize_chinese(q) for q in predicted], [p.chinese for p in pairs])
        return {"exact_match": exact, "bleu": bleu}


#: the N = 6 translator of notebook 08 (and of benchmarks/translation_recipe.py): model sizes, then training
TRANSLATOR = dict(d_model=64, num_heads=4, d_ff=128, dropout=0.0, steps=500, batch_size=64, lr=3e-3, warmup=100,
                  final_lr=0.05, n_train=12000)


def translation_task(seed: int = 0, *, n_train: int = 12000, n_valid: int = 300, n_test: int = 1000
                     ) -> TranslationTask:
    """The splits drawn from ``seed``: training pairs never use a :data:`HELD_OUT` combination; the test pairs
    all do; the validation pairs are unseen sentences without one. All three are disjoint."""
    train = generate_pairs(n_train, seed, held_out=False)
    valid = generate_pairs(n_valid, seed + 1, held_out=False, exclude=train)
    test = generate_pairs(n_test, seed + 2, held_out=True)
    train_words = {w for p in train for w in p.src}
    missing = sorted({w for p in test for w in p.src} - train_words)
    if missing:
        raise ValueError(f"n_train = {n_train} is too small: the test split uses words never trained on: {missing}")
    return TranslationTask(Vocabulary(english_words(), chinese_tokens()), train, valid, test, seed)


# ------------------------------------------------------------------------------------ type your own sentence


class SentenceError(ValueError):
    """A sentence the model cannot take; ``unknown`` maps each unknown word to close words the model knows."""

    def __init__(self, message: str, unknown: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.unknown = unknown or {}


MAX_WORDS = 30
_CONTRACTIONS = {"doesn't": "does not", "don't": "do not", "doesnt": "does not", "dont": "do not",
                 "i'm": "i am"}
_QUESTION_STARTS = {"do", "does", "what", "who", "where"}


def parse_sentence(text: object, *, known: frozenset[str] | None = None) -> list[str]:
    """A learner's English sentence -> the model's tokens, or a :class:`SentenceError` that says what is wrong.

    Normalises: Unicode width and accents (NFKC), case, curly apostrophes, contractions (doesn't -> does not),
    digits (3 -> three), "!" -> "."; drops emoji, commas and other symbols and extra spaces; keeps one final
    "." or "?" (adding "?" to a sentence that starts like a question, "." otherwise).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    known = english_words() if known is None else known
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "'?.!" or char.isspace():
            kept.append(char)
        elif category[0] in "LN":
            kept.append(char)
        else:
            kept.append(" ")  # emoji (So), commas and other punctuation, control characters
    text = "".join(kept)
    if len(text) > 40 * MAX_WORDS:
        raise SentenceError(say(f"that is too long: type one sentence of at most {MAX_WORDS} words",
                                f"太长了：请输入一个不超过 {MAX_WORDS} 个词的句子"))
    words: list[str] = []
    for word in re.findall(r"[^\s.?!]+|[.?!]", text):
        word = _CONTRACTIONS.get(word, word).strip("'")
        words += [DIGITS.get(w, w) for w in word.split()] if word else []
    words = ["." if w == "!" else w for w in words]
    body = [w for w in words if w not in ".?"]
    if not body:
        raise SentenceError(say("type an English sentence, for example: The cat eats fish.",
                                "请输入一个英文句子，例如：The cat eats fish."))
    if len(body) > MAX_WORDS:
        raise SentenceError(say(f"that is {len(body)} words; type one sentence of at most {MAX_WORDS} words",
                                f"这句话有 {len(body)} 个词；请输入一个不超过 {MAX_WORDS} 个词的句子"))
    end = next((w for w in reversed(words) if w in ".?"), None)
    end = end or ("?" if body[0] in _QUESTION_STARTS else ".")
    unknown: dict[str, list[str]] = {}
    for word in body:
        if word not in known and word not in unknown:
            if word.isdigit():
                unknown[word] = sorted(DIGITS, key=int)
            else:
                unknown[word] = difflib.get_close_matches(word, sorted(known - {".", "?"}), n=4, cutoff=0.6)
    if unknown:
        parts = [f"'{w}'" + (say(f" (did you mean {', '.join(close)}?)", f"（你想输入的是不是 {', '.join(close)}？）")
                             if close else "") for w, close in unknown.items()]
        noun = "word" if len(unknown) == 1 else "words"
        raise SentenceError(say(f"the model does not know the {noun} {'; '.join(parts)}",
                                f"模型不认识这些词：{'；'.join(parts)}"), unknown)
    return [*body, end]


@dataclass(frozen=True)
class Translation:
    """What the text box shows: tokens for both axes, the Chinese text, and the cross-attention.

    cross (layers, heads, L_tgt, L_src): row t is the decoder position that produced target token t
    (the last row produced EOS); columns are the English tokens.
    """

    source: list[str]
    target: list[str]
    text: str
    cross: Tensor
    #: every map of the forward pass: "encoder_self" (layers, heads, L_src, L_src), "decoder_self"
    #: (layers, heads, L_tgt, L_tgt) and "cross" (layers, heads, L_tgt, L_src)
    maps: dict[str, Tensor] = field(default_factory=dict)

    @property
    def rows(self) -> list[str]:
        return [*self.target, "<eos>"][: self.cross.shape[-2]]


@torch.no_grad()
def translate_text(model: torch.nn.Module, task: TranslationTask, text: str) -> Translation:
    """Parse ``text`` (raising :class:`SentenceError`), translate it greedily, and keep the cross-attention."""
    source = parse_sentence(text)
    src = task.encode_source([source])
    was_training = model.training
    model.eval()
    decoded = model.greedy_decode(src, task.max_tgt_len + 2)  # (1, L)
    target = task.vocab.decode(decoded[0].tolist())
    tgt_in = torch.tensor([[BOS] + task.vocab.encode(target)])
    model(src, tgt_in, need_weights=True)
    maps = {kind: w[:, 0] for kind, w in model.transformer.attention_maps().items()}  # (layers, heads, L_q, L_k)
    model.train(was_training)
    return Translation(source, target, detokenize_chinese(target), maps["cross"], maps)


@torch.no_grad()
def measure_alignment(model: torch.nn.Module, task: TranslationTask, pairs: Sequence[Pair]):
    """Score every cross-attention head against the true alignment of ``pairs`` (teacher forcing on the reference,
    so row t is the position that predicts reference token t). Returns :class:`helpers.alignment.AlignmentScores`
    of shape (layers, heads); :func:`helpers.alignment.rank_heads` orders them."""
    from helpers.alignment import alignment_scores, gold_alignment

    batch = task.batch(pairs)
    was_training = model.training
    model.eval()
    model(batch.src, batch.tgt_in, need_weights=True)
    cross = model.transformer.attention_maps()["cross"]  # (layers, batch, heads, L_tgt, L_src)
    model.train(was_training)
    gold, valid = gold_alignment([p.alignment for p in pairs], batch.tgt_out.shape[1], batch.src.shape[1])
    return alignment_scores(cross, gold, valid)
