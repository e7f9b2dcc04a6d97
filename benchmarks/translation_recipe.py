"""The recipe for the N = 6 English -> Chinese translator, timed: exact match and sacrebleu BLEU on the test split.

Run: ``python benchmarks/translation_recipe.py [--threads 2] [--steps 900] ...``; prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

from helpers.reproducibility import seed_everything
from helpers.seq2seq import Seq2SeqTransformer
from helpers.training import train
from helpers.translation import TRANSLATOR, translation_task

RECIPE = dict(TRANSLATOR)  # the recipe notebook 08 uses


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    for key, value in RECIPE.items():
        parser.add_argument(f"--{key}", type=type(value), default=value)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--errors", type=int, default=0, help="print this many wrong test translations")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else []
    start = time.perf_counter()
    seed_everything(args.seed)
    task = translation_task(args.seed, n_train=args.n_train)
    data_seconds = time.perf_counter() - start
    model = Seq2SeqTransformer(
        len(task.vocab),
        d_model=args.d_model,
        num_heads=args.num_heads,
        num_encoder_layers=6,
        num_decoder_layers=6,
        d_ff=args.d_ff,
        dropout=args.dropout,
        norm_first=True,
        max_len=64,
    )
    valid = task.batch(task.valid[:200])
    result = train(
        model,
        task.sampler(args.batch_size, args.seed),
        steps=args.steps,
        lr=args.lr,
        warmup=args.warmup,
        final_lr=args.final_lr,
        eval_batch=valid,
        eval_every=100,
        target_accuracy=None,
        progress=args.progress,
        desc="N=6 en->zh",
    )
    t = time.perf_counter()
    test = task.score(model, task.test)
    valid_score = task.score(model, task.valid)
    score_seconds = time.perf_counter() - t
    if args.errors:
        from collections import Counter

        from helpers.translation import HELD_OUT

        predicted = task.translate(model, task.test)
        wrong = [(p, q) for p, q in zip(task.test, predicted) if list(p.tgt) != q]
        by_combo = Counter(c for p, _ in wrong for c in p.combinations & HELD_OUT)
        total = Counter(c for p in task.test for c in p.combinations & HELD_OUT)
        print({f"{k[0]}:{k[1]}+{k[2]}": f"{by_combo[k]}/{total[k]}" for k in total})
        for p, q in wrong[: args.errors]:
            print(p.english, p.chinese, "".join(q))
    print(
        json.dumps(
            {
                "threads": args.threads,
                "load_before": load,
                "load_after": open("/proc/loadavg").read().split()[:3],
                **{k: getattr(args, k) for k in RECIPE},
                "steps_run": result.steps,
                "data_s": round(data_seconds, 1),
                "train_s": round(result.seconds, 1),
                "score_s": round(score_seconds, 1),
                "valid_curve": result.accuracies,
                "final_loss": round(result.losses[-1], 4),
                "test_em": round(test["exact_match"], 4),
                "test_bleu": round(test["bleu"], 2),
                "valid_em": round(valid_score["exact_match"], 4),
                "valid_bleu": round(valid_score["bleu"], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
