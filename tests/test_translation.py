"""The English -> Chinese task: grammar, alignment, splits, batches, scoring, parse_sentence, alignment scores, font."""

from __future__ import annotations

import warnings

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from helpers import translation as tr
from helpers.alignment import alignment_scores, gold_alignment, rank_heads
from helpers.seq2seq import Seq2SeqTransformer
from helpers.tasks import BOS, EOS, PAD
from helpers.translation import (
    HELD_OUT,
    SentenceError,
    corpus_bleu,
    english_words,
    generate_pairs,
    make_pair,
    parse_sentence,
    translate_text,
    translation_task,
)


@pytest.fixture(scope="module")
def task() -> tr.TranslationTask:
    return translation_task(0, n_train=4000, n_valid=100, n_test=300)


BARE, THE, COUNT = "bare", "definite", "counted"


def test_make_pair_rejects_what_the_grammar_does_not_allow() -> None:
    with pytest.raises(ValueError, match="kind must be"):
        make_pair("command", "i", "drink", (BARE, "tea", None, None))
    with pytest.raises(ValueError, match="obj of 'drink'"):
        make_pair("statement", "i", "drink", (BARE, "book", None, None))
    with pytest.raises(ValueError, match="animal subject"):
        make_pair("statement", (THE, "cat", None, None), "read", (BARE, "book", None, None))
    with pytest.raises(ValueError, match="adjective for 'fish'"):
        make_pair("statement", "i", "buy", (COUNT, "fish", "two", "red"))
    with pytest.raises(ValueError, match="no 'every' in negatives"):
        make_pair("negative", "i", "drink", (BARE, "tea", None, None), time="every day")


# ------------------------------------------------------------------------------------------- the grammar


EXAMPLES = {
    "I drink tea at home every morning.": (
        "statement",
        "i",
        "drink",
        (BARE, "tea", None, None),
        "at home",
        "every morning",
    ),
    "What does the cat eat?": ("what", (THE, "cat", None, None), "eat", None),
    "Does she like cats?": ("yes/no", "she", "like", (BARE, "cat", None, None)),
    "He does not drink coffee.": ("negative", "he", "drink", (BARE, "coffee", None, None)),
    "I do not have a dog.": ("negative", "i", "have", (COUNT, "dog", None, None)),
    "They have two cats.": ("statement", "they", "have", (COUNT, "cat", "two", None)),
    "We buy twelve eggs.": ("statement", "we", "buy", (COUNT, "egg", "twelve", None)),
    "She eats an egg.": ("statement", "she", "eat", (COUNT, "egg", "a", None)),
    "I do not have an old chair.": ("negative", "i", "have", (COUNT, "chair", None, "old")),
    "The big dog sees three black cats.": (
        "statement",
        (THE, "dog", None, "big"),
        "see",
        (COUNT, "cat", "three", "black"),
    ),
    "My friend reads books in the library.": (
        "statement",
        "friend",
        "read",
        (BARE, "book", None, None),
        "in the library",
    ),
    "My mother likes music.": ("statement", "mother", "like", (BARE, "music", None, None)),
    "Where does he read books today?": ("where", "he", "read", (BARE, "book", None, None), None, "today"),
    "Who eats rice?": ("who", "i", "eat", (BARE, "rice", None, None)),
    "She does not eat fish in the park today.": (
        "negative",
        "she",
        "eat",
        (BARE, "fish", None, None),
        "in the park",
        "today",
    ),
}
CHINESE = {
    "I drink tea at home every morning.": "我每天早上在家喝茶。",
    "What does the cat eat?": "猫吃什么？",
    "Does she like cats?": "她喜欢猫吗？",
    "He does not drink coffee.": "他不喝咖啡。",
    "I do not have a dog.": "我没有狗。",
    "They have two cats.": "他们有两只猫。",
    "We buy twelve eggs.": "我们买十二个鸡蛋。",
    "She eats an egg.": "她吃一个鸡蛋。",
    "I do not have an old chair.": "我没有旧椅子。",
    "The big dog sees three black cats.": "大狗看见三只黑猫。",
    "My friend reads books in the library.": "我的朋友在图书馆看书。",
    "My mother likes music.": "我妈妈喜欢音乐。",
    "Where does he read books today?": "他今天在哪儿看书？",
    "Who eats rice?": "谁吃米饭？",
    "She does not eat fish in the park today.": "她今天不在公园吃鱼。",
}


def pair_of(english: str) -> tr.Pair:
    return make_pair(*EXAMPLES[english])


@pytest.mark.parametrize("english", list(EXAMPLES))
def test_known_sentences_translate_by_the_rules(english: str) -> None:
    pair = pair_of(english)
    assert pair.english == english
    assert pair.chinese == CHINESE[english]


def test_alignment_follows_the_documented_rule() -> None:
    pair = pair_of("I drink tea at home every morning.")
    produced = {word: [pair.tgt[t] for t in targets] for word, targets in zip(pair.src, pair.alignment)}
    assert produced == {
        "i": ["我"],
        "drink": ["喝"],
        "tea": ["茶"],
        "at": ["在"],
        "home": ["家"],
        "every": ["每", "天"],
        "morning": ["早上"],
        ".": ["。"],
    }
    pair = pair_of("They have two cats.")
    assert [pair.tgt[t] for t in pair.alignment[pair.src.index("two")]] == ["两", "只"]
    pair = pair_of("What does the cat eat?")
    assert pair.alignment[pair.src.index("does")] == () and pair.alignment[pair.src.index("the")] == ()


def test_every_target_token_comes_from_exactly_one_source_token() -> None:
    for pair in generate_pairs(2000, seed=3):
        produced = sorted(t for targets in pair.alignment for t in targets)
        assert produced == list(range(len(pair.tgt))), pair
        assert len(pair.alignment) == len(pair.src)


def test_generation_is_deterministic_and_seeded() -> None:
    assert generate_pairs(50, seed=1) == generate_pairs(50, seed=1)
    assert generate_pairs(50, seed=1) != generate_pairs(50, seed=2)


def test_grammar_size_and_coverage() -> None:
    assert 100 <= len(english_words()) <= 300
    kinds = {p.kind for p in generate_pairs(500, seed=0)}
    assert kinds == {"statement", "negative", "yes/no", "what", "who", "where"}


def test_two_is_liang_before_a_measure_word() -> None:
    pairs = generate_pairs(3000, seed=5)
    for pair in pairs:
        if "two" in pair.src:
            assert "两" in pair.tgt and "二" not in pair.tgt
    assert any("二十" in p.tgt for p in pairs) and any("两" in p.tgt for p in pairs)


def test_negation_uses_mei_only_with_you() -> None:
    for pair in generate_pairs(3000, seed=6):
        if pair.kind == "negative":
            assert ("没" in pair.tgt) == ("有" in pair.tgt)
            assert ("不" in pair.tgt) != ("没" in pair.tgt)


# ---------------------------------------------------------------------------------------------- splits


def test_splits_hold_out_combinations_but_no_words(task: tr.TranslationTask) -> None:
    assert all(not (p.combinations & HELD_OUT) for p in task.train + task.valid)
    assert all(p.combinations & HELD_OUT for p in task.test)
    train_src = {p.src for p in task.train}
    assert not train_src & {p.src for p in task.test} and not train_src & {p.src for p in task.valid}
    assert {w for p in task.test for w in p.src} <= {w for p in task.train for w in p.src}


def test_generate_pairs_rejects_bad_n() -> None:
    with pytest.raises(ValueError, match="n must be"):
        generate_pairs(-1, seed=0)


# ---------------------------------------------------------------------------------- vocabulary and batches


def test_vocabulary_round_trip(task: tr.TranslationTask) -> None:
    vocab = task.vocab
    assert vocab.tokens[:3] == ["<pad>", "<bos>", "<eos>"]
    pair = task.test[0]
    ids = vocab.encode(pair.tgt)
    assert min(ids) >= 3
    assert vocab.decode([BOS, *ids, EOS, PAD, ids[0]]) == list(pair.tgt)
    with pytest.raises(ValueError, match="unknown"):
        vocab.encode(["zebra"])
    with pytest.raises(ValueError, match="ids must be in"):
        vocab.decode([len(vocab)])


def test_batch_layout(task: tr.TranslationTask) -> None:
    pairs = task.train[:5]
    batch = task.batch(pairs)
    lengths = [len(p.tgt) for p in pairs]
    assert batch.src.shape == (5, max(len(p.src) for p in pairs))
    assert batch.tgt_in.shape == batch.tgt_out.shape == (5, max(lengths) + 1)
    for row, p in enumerate(pairs):
        n = len(p.tgt)
        assert task.vocab.decode(batch.src[row].tolist()) == list(p.src)
        assert batch.tgt_in[row, 0] == BOS and batch.tgt_out[row, n] == EOS
        assert batch.tgt_in[row, 1 : n + 1].tolist() == batch.tgt_out[row, :n].tolist()
        assert (batch.tgt_out[row, n + 1 :] == PAD).all()
    with pytest.raises(ValueError, match="must not be empty"):
        task.batch([])


def test_sampler_covers_the_training_split(task: tr.TranslationTask) -> None:
    next_batch = task.sampler(1000, seed=0)
    seen = set()
    for _ in range(4):
        batch = next_batch()
        seen |= {tuple(row) for row in batch.src.tolist()}
    assert len(seen) == len(task.train)


def test_bleu_is_sacrebleu_with_the_chinese_tokenizer() -> None:
    assert corpus_bleu(["猫吃什么？"], ["猫吃什么？"]) == pytest.approx(100.0)
    partly = corpus_bleu(["猫吃鱼。"], ["猫吃什么？"])
    assert 0 <= partly < 50
    with pytest.raises(ValueError, match="same length"):
        corpus_bleu(["a"], [])


def test_score_of_a_perfect_and_an_untrained_model(task: tr.TranslationTask) -> None:
    class Oracle(torch.nn.Module):
        """Answers each source sentence with its reference translation, as greedy_decode would."""

        def __init__(self) -> None:
            super().__init__()
            self.table = {p.src: p.tgt for p in task.test}

        def greedy_decode(self, src: torch.Tensor, max_new_tokens: int) -> torch.Tensor:
            rows = [task.vocab.encode(self.table[tuple(task.vocab.decode(r))]) + [EOS] for r in src.tolist()]
            width = max(map(len, rows))
            return torch.tensor([r + [PAD] * (width - len(r)) for r in rows])

    assert task.score(Oracle(), task.test) == {"exact_match": 1.0, "bleu": pytest.approx(100.0)}
    torch.manual_seed(0)
    untrained = Seq2SeqTransformer(
        len(task.vocab), d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=16
    )
    score = task.score(untrained, task.test[:20])
    assert score["exact_match"] == 0.0 and score["bleu"] < 10


# ------------------------------------------------------------------------------------------ parse_sentence


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("The cat eats fish.", ["the", "cat", "eats", "fish", "."]),
        ("  THE   Cat eats FISH  ", ["the", "cat", "eats", "fish", "."]),
        ("What does the cat eat", ["what", "does", "the", "cat", "eat", "?"]),
        ("What does the cat eat??!", ["what", "does", "the", "cat", "eat", "."]),
        ("I have 2 cats!", ["i", "have", "two", "cats", "."]),
        ("He doesn’t drink coffee.", ["he", "does", "not", "drink", "coffee", "."]),
        ("The cat 🐱 eats fish 🐟.", ["the", "cat", "eats", "fish", "."]),
        ("Ｔｈｅ cat, eats fish。", ["the", "cat", "eats", "fish", "."]),
    ],
)
def test_parse_sentence_normalises(text: str, tokens: list[str]) -> None:
    assert parse_sentence(text) == tokens


@pytest.mark.parametrize("text", ["", "   ", "?!.", "🐱🐟", "\x00\t\n"])
def test_parse_sentence_empty_input_gets_a_friendly_error(text: str) -> None:
    with pytest.raises(SentenceError, match="type an English sentence"):
        parse_sentence(text)


def test_parse_sentence_too_long() -> None:
    with pytest.raises(SentenceError, match="at most 30 words"):
        parse_sentence("the cat eats fish " * 20)
    with pytest.raises(SentenceError, match="too long"):
        parse_sentence("x" * 100_000)


def test_parse_sentence_names_unknown_words_with_close_ones() -> None:
    with pytest.raises(SentenceError) as error:
        parse_sentence("The catt eats zebras and fishh")
    unknown = error.value.unknown
    assert list(unknown) == ["catt", "zebras", "and", "fishh"]
    assert "cat" in unknown["catt"] and "fish" in unknown["fishh"]
    message = str(error.value)
    assert "'catt' (did you mean cat" in message and "'zebras'" in message
    with pytest.raises(SentenceError, match="'7000'") as error:
        parse_sentence("I have 7000 cats")  # only the numbers of the grammar have words
    assert "7000" in error.value.unknown


def test_parse_sentence_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="text must be a str"):
        parse_sentence(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "The cat eats fish.",
        "the the the ? ? .",
        "Cat fish." * 3,
        "Ünïcödé cat",
        "x" * 5000,
        "12345",
        "' ' ' '",
        "I don't",
    ],
)
def test_parse_sentence_never_crashes(text: str) -> None:
    try:
        tokens = parse_sentence(text)
    except SentenceError as error:
        assert str(error)
    else:
        assert tokens and tokens[-1] in (".", "?") and set(tokens) <= english_words()


def test_translate_text_returns_tokens_and_cross_attention(task: tr.TranslationTask) -> None:
    torch.manual_seed(0)
    model = Seq2SeqTransformer(
        len(task.vocab), d_model=16, num_heads=2, num_encoder_layers=2, num_decoder_layers=2, d_ff=16, max_len=64
    )
    result = translate_text(model, task, "The cat eats fish")
    assert result.source == ["the", "cat", "eats", "fish", "."]
    assert result.cross.shape == (2, 2, len(result.target) + 1, 5)
    torch.testing.assert_close(result.cross.sum(-1), torch.ones(2, 2, len(result.target) + 1))
    assert result.rows[-1] == "<eos>" and result.text == "".join(result.target)
    with pytest.raises(SentenceError, match="zebra"):
        translate_text(model, task, "The zebra eats fish")


# ------------------------------------------------------------------------------------- alignment scores


def _one_hot_weights(gold: torch.Tensor, heads: int = 1) -> torch.Tensor:
    """(batch, heads, L_tgt, L_src) weights with all the mass on the first true source of each row."""
    first = gold.float().argmax(-1)  # (batch, L_tgt)
    weights = torch.nn.functional.one_hot(first, gold.shape[-1]).float()
    return weights[:, None].expand(-1, heads, -1, -1).clone()


def test_gold_alignment_from_pairs(task: tr.TranslationTask) -> None:
    pairs = task.test[:4]
    batch = task.batch(pairs)
    gold, valid = gold_alignment([p.alignment for p in pairs], batch.tgt_out.shape[1], batch.src.shape[1])
    for b, p in enumerate(pairs):
        assert {(int(t), int(s)) for t, s in gold[b].nonzero()} == p.links()
        assert valid[b].tolist() == [t < len(p.tgt) for t in range(batch.tgt_out.shape[1])]
    with pytest.raises(ValueError, match="outside"):
        gold_alignment([((5,),)], 3, 1)


def test_a_perfect_head_has_aer_zero_and_a_wrong_one_aer_one(task: tr.TranslationTask) -> None:
    pairs = task.test[:16]
    batch = task.batch(pairs)
    gold, valid = gold_alignment([p.alignment for p in pairs], batch.tgt_out.shape[1], batch.src.shape[1])
    perfect = _one_hot_weights(gold)
    wrong = torch.roll(perfect, 1, dims=-1) * 0.0
    wrong[..., :] = ~gold[:, None] / (~gold[:, None]).sum(-1, keepdim=True).clamp(min=1)  # mass off the links
    uniform = torch.full_like(perfect, 1.0 / perfect.shape[-1])
    layers = torch.stack([torch.cat([perfect, wrong, uniform], dim=1)])  # (1 layer, batch, 3 heads, T, S)
    scores = alignment_scores(layers, gold, valid)
    assert scores.aer.shape == (1, 3)
    assert scores.aer[0, 0] == 0 and scores.precision[0, 0] == 1 and scores.recall[0, 0] == 1
    assert scores.mass[0, 0] == pytest.approx(1.0)
    assert scores.aer[0, 1] == 1 and scores.mass[0, 1] == pytest.approx(0.0, abs=1e-6)
    assert 0 < scores.mass[0, 2] < 1
    ranking = rank_heads(scores)
    assert [(h.layer, h.head) for h in ranking][0] == (0, 0)
    assert ranking[-1].aer >= ranking[0].aer


def test_aer_counts_links_by_hand() -> None:
    # 2 target tokens, 3 source tokens; token 0 <- source 0, token 1 <- source 2; row 2 is EOS (not scored)
    gold = torch.tensor([[[True, False, False], [False, False, True], [False, False, False]]])
    weights = torch.tensor([[[[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.0, 0.0, 1.0]]]])  # (1, 1 head, 3, 3)
    scores = alignment_scores(weights, gold)
    assert scores.aer.shape == (1,)
    assert scores.precision.item() == pytest.approx(0.5) and scores.recall.item() == pytest.approx(0.5)
    assert scores.aer.item() == pytest.approx(0.5)
    assert scores.mass.item() == pytest.approx((0.7 + 0.3) / 2)


def test_alignment_scores_validate_their_arguments() -> None:
    gold = torch.zeros(2, 3, 4, dtype=torch.bool)
    with pytest.raises(ValueError, match="weights must be"):
        alignment_scores(torch.rand(3, 4), gold)
    with pytest.raises(ValueError, match="gold must have shape"):
        alignment_scores(torch.rand(2, 1, 3, 5), gold)
    with pytest.raises(TypeError, match="gold must be a torch.bool"):
        alignment_scores(torch.rand(2, 1, 3, 4), gold.float())
    with pytest.raises(ValueError, match="valid must have shape"):
        alignment_scores(torch.rand(2, 1, 3, 4), gold, torch.ones(2, 4, dtype=torch.bool))


# ------------------------------------------------------------------------------------------------ the font


def _missing_glyphs(text: str) -> list[str]:
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.set_title(text)
    ax.set_xticks([0, 1], ["猫", "the cat"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FigureCanvasAgg(fig).draw()
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_chinese_labels_render_with_no_missing_glyph() -> None:
    import matplotlib

    from helpers.fonts import INSTALL_HINT, find_cjk_font, use_cjk_font

    assert find_cjk_font() is not None, f"no CJK font installed: {INSTALL_HINT}"
    saved = matplotlib.rcParams.copy()
    try:
        matplotlib.rcParams["font.family"] = ["DejaVu Sans"]
        assert _missing_glyphs("猫吃什么？"), "the check must see DejaVu Sans lack Chinese glyphs"
        use_cjk_font()
        assert _missing_glyphs("我每天早上在家喝茶。 What does the cat eat? 两只猫 −1") == []
    finally:
        matplotlib.rcParams.update(saved)


def test_measure_alignment_scores_every_head(task: tr.TranslationTask) -> None:
    torch.manual_seed(0)
    model = Seq2SeqTransformer(
        len(task.vocab), d_model=16, num_heads=2, num_encoder_layers=3, num_decoder_layers=3, d_ff=16, max_len=64
    )
    scores = tr.measure_alignment(model, task, task.test[:32])
    assert scores.aer.shape == scores.mass.shape == (3, 2)
    assert ((scores.aer >= 0) & (scores.aer <= 1)).all() and ((scores.mass >= 0) & (scores.mass <= 1)).all()
    assert model.training  # left as it was
