"""Dynamic batching for the checkpoint server (spade_serve_model.py), run in the training venv.

The evaluation plays several episodes at once (the model client's concurrency), so several chat
requests wait at the same time. On a CPU one generate() call over a batch of them costs far less than
the same calls one after the other (the weights are read once per token for the whole batch), so the
server gathers what is waiting, for at most `wait_s`, into batches of requests that share how they
are sampled (model, temperature, top_p, top_k, token budget) and generates each batch in one call.
Each request gets only its own tokens back, cut at its end-of-sequence token.
"""
from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Hashable


class Job:
    def __init__(self, key: Hashable, ids: list[int]) -> None:
        self.key = key
        self.ids = ids
        self.done = threading.Event()
        self.result: tuple[list[int], bool] | None = None
        self.error: BaseException | None = None


# run(key, list of prompt token ids) -> for each prompt, (its new tokens, whether it ended at EOS)
RunBatch = Callable[[Hashable, list[list[int]]], list[tuple[list[int], bool]]]


class Batcher:
    def __init__(self, run: RunBatch, max_batch: int = 8, wait_s: float = 0.02, start: bool = True) -> None:
        self.run = run
        self.max_batch = max_batch
        self.wait_s = wait_s
        self.q: queue.Queue[Job] = queue.Queue()
        self.held: list[Job] = []
        if start:
            self.start()

    def start(self) -> None:
        threading.Thread(target=self._loop, daemon=True, name="batcher").start()

    def submit(self, key: Hashable, ids: list[int]) -> tuple[list[int], bool]:
        job = Job(key, ids)
        self.q.put(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def _next_batch(self) -> list[Job]:
        first = self.held.pop(0) if self.held else self.q.get()
        batch = [first]
        # Requests of another key wait for their own batch, in the order they came.
        keep: list[Job] = []
        for j in self.held:
            (batch if j.key == first.key and len(batch) < self.max_batch else keep).append(j)
        self.held = keep
        while len(batch) < self.max_batch:
            try:
                j = self.q.get(timeout=self.wait_s)
            except queue.Empty:
                break
            (batch if j.key == first.key else self.held).append(j)
        return batch

    def _loop(self) -> None:
        while True:
            batch = self._next_batch()
            try:
                out = self.run(batch[0].key, [j.ids for j in batch])
                for j, r in zip(batch, out):
                    j.result = r
            except BaseException as e:  # every waiting request gets the error, the server lives on
                for j in batch:
                    j.error = e
            for j in batch:
                j.done.set()


def generate_batch(model: Any, tok: Any, device: str, key: tuple[Any, ...], prompts: list[list[int]], adapter_off: Callable[[], Any]) -> list[tuple[list[int], bool]]:
    """One generate() over left-padded prompts; key = (model name, temperature, top_p, top_k, max_new)."""
    import torch

    name, temp, top_p, top_k, max_new = key
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    width = max(len(p) for p in prompts)
    x = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    gen: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": pad, "attention_mask": mask}
    if temp > 0:
        gen.update(do_sample=True, temperature=temp, top_p=top_p, **({"top_k": top_k} if top_k else {}))
    else:
        gen.update(do_sample=False)
    with torch.no_grad():
        if name == "base":
            with adapter_off():
                out = model.generate(x, **gen)
        else:
            out = model.generate(x, **gen)
    res: list[tuple[list[int], bool]] = []
    for row in out[:, width:].tolist():
        # A row that ended early is padded after its EOS: its own tokens end there.
        if tok.eos_token_id in row:
            res.append((row[: row.index(tok.eos_token_id) + 1], True))
        else:
            res.append((row, False))
    return res
