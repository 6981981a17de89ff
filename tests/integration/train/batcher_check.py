"""Checks of resources/train/spade_batcher.py, run by batcher.test.ts in the training venv (it prints one JSON line)."""
import json
import sys
import threading
import time

sys.path.insert(0, sys.argv[1])
from spade_batcher import Batcher, generate_batch  # noqa: E402

out: dict = {}

# 1. Grouping: jobs that wait together and share a key go in one batch; another key waits for its own;
#    each job gets its own answer back; a failing batch fails its jobs only, and the batcher goes on.
batches: list = []


def run(key, prompts):
    batches.append([key, [p[0] for p in prompts]])
    if key == "boom":
        raise RuntimeError("the batch failed")
    return [([p[0] * 10], True) for p in prompts]


# The queue is filled, in a known order, before the worker starts: what it groups does not hang on timing.
b = Batcher(run, max_batch=3, wait_s=0.2, start=False)
results: dict = {}


def ask(key, n):
    try:
        results[n] = b.submit(key, [n])[0]
    except RuntimeError as e:
        results[n] = str(e)


threads = [threading.Thread(target=ask, args=(k, n)) for k, n in [("a", 1), ("a", 2), ("b", 3), ("a", 4), ("a", 5), ("boom", 6)]]
for i, t in enumerate(threads):
    t.start()
    while b.q.qsize() <= i:
        time.sleep(0.005)
b.start()
for t in threads:
    t.join(10)
ask("a", 7)
out["batches"] = batches
out["results"] = {str(k): v for k, v in sorted(results.items())}

# 2. Batched greedy generation equals one prompt at a time (left padding changes nothing a person reads).
if len(sys.argv) > 3:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(sys.argv[2], gguf_file=sys.argv[3])
    model = AutoModelForCausalLM.from_pretrained(sys.argv[2], gguf_file=sys.argv[3], dtype=torch.float32)
    model.eval()
    prompts = [tok.apply_chat_template([{"role": "user", "content": c}], add_generation_prompt=True, tokenize=True, return_dict=False) for c in ["Say hello.", "Name three colours of the rainbow, then count from one to five."]]
    key = ("checkpoint", 0.0, 1.0, 0, 12)
    together = generate_batch(model, tok, "cpu", key, [list(p) for p in prompts], lambda: None)
    alone = [generate_batch(model, tok, "cpu", key, [list(p)], lambda: None)[0] for p in prompts]
    out["lengths"] = [len(p) for p in prompts]
    out["together"] = [list(t[0]) for t in together]
    out["alone"] = [list(t[0]) for t in alone]
print(json.dumps(out))
