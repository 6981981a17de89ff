"""GRPO with LoRA on SPADE environments served by `spade-workbench serve-env` (OpenEnv's protocol).

Run by `spade-workbench train` in the training venv (core/train/venv.ts: torch, transformers, TRL,
PEFT, gguf, pinned). TRL's GRPOTrainer trains a PEFT LoRA adapter; its `rollout_func` plays each
episode over serve-env's /ws (spade_openenv_client.py), so no environment code runs here. Each
episode is multi-turn: the model answers, serve-env steps the game in the workbench's sandbox and
answers with the next observation, until the game ends or --max-turns. The reward is the episode's
return as serve-env gives it (SPADE's return: the last reward clamped to [-1, 1] when the game
terminated it, else 0). Tokens of the observations between turns are masked out of the loss
(TRL's `env_mask`).

Every dict TRL logs is printed as one JSON line `{"step": N, ...}`, which the workbench's job
follower reads into the job's metric series (core/api/spadeMetrics.ts, JSON lines with a step key).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spade_openenv_client import OpenEnvError, Session, get_json  # noqa: E402


BOXED = re.compile(r"\\boxed\{[^{}]*\}")


def emit(kind: str, **fields: Any) -> None:
    print(json.dumps({"event": kind, **fields}), flush=True)


def load_model(model: str, gguf_file: str | None, device: str) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kw: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    tok = AutoTokenizer.from_pretrained(model, **kw)
    # GGUF weights are dequantized to float32 by transformers; CPU trains in float32.
    m = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32, **kw).to(device)
    if gguf_file:
        # transformers dequantizes GGUF weights to plain float32 tensors on load but still marks the
        # model as GGUF-quantized, and its Trainer refuses to train a model so marked. Nothing
        # quantized remains, so the mark goes.
        m.hf_quantizer = None
        m.is_quantized = False
        if getattr(m.config, "quantization_config", None) is not None:
            del m.config.quantization_config
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return m, tok


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True, help="serve-env's base URL (http://127.0.0.1:P)")
    p.add_argument("--token", default=None)
    p.add_argument("--model", required=True, help="a model folder or a Hugging Face name on this machine (with --gguf-file: the folder holding it)")
    p.add_argument("--gguf-file", default=None)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--group-size", type=int, default=2)
    p.add_argument("--prompts-per-step", type=int, default=2)
    p.add_argument("--lora-rank", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--beta", type=float, default=0.04, help="KL coefficient against the base model (adapter off)")
    p.add_argument("--max-turns", type=int, default=3)
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--hint-share", type=float, default=0.5)
    p.add_argument("--boxed-reward", type=float, default=0.0, help="an option, not SPADE's reward: add W x the share of the model's turns that answer inside \\boxed{...} (the games' answer format); 0 (default) trains on SPADE's return alone")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-every", type=int, default=0, help="save a checkpoint every N steps (0: only the final one)")
    return p.parse_args(argv)


def build_rows(tasks: list[dict[str, Any]], hint_share: float, n: int, rng: random.Random) -> list[str]:
    """The training prompts: one task per row, named by its id; hinted with probability --hint-share where the environment has a hint."""
    by_key: dict[tuple[str, int], dict[bool, str]] = {}
    for t in tasks:
        by_key.setdefault((t["env_hash"], int(t["seed"])), {})[bool(t["hint"])] = t["task_id"]
    keys = sorted(by_key)
    rows: list[str] = []
    for i in range(n):
        arms = by_key[keys[i % len(keys)]]
        hinted = True in arms and (False not in arms or rng.random() < hint_share)
        rows.append(arms[hinted])
    return rows


def failed(tok: Any, task_id: str, error: str) -> dict[str, Any]:
    """An episode serve-env could not play (the game failed in its sandbox): said once, reward 0, nothing to learn from (mask 0)."""
    emit("episode_failed", task=task_id, error=error[:2000])
    prompt_ids: list[int] = tok.apply_chat_template([{"role": "user", "content": task_id}], add_generation_prompt=True, tokenize=True, return_dict=False)
    return {"prompt_ids": prompt_ids, "completion_ids": [tok.eos_token_id], "env_mask": [0], "reward": 0.0, "spade_return": 0.0, "turns": 0, "failed": True}


def play(model: Any, tok: Any, url: str, token: str | None, task_id: str, a: argparse.Namespace) -> dict[str, Any]:
    """One episode over /ws; an episode the game fails in the sandbox is reported and scores 0, never ending the run."""
    try:
        return play_ok(model, tok, url, token, task_id, a)
    except OpenEnvError as e:
        return failed(tok, task_id, str(e))


def play_ok(model: Any, tok: Any, url: str, token: str | None, task_id: str, a: argparse.Namespace) -> dict[str, Any]:
    """One episode over /ws: the token ids TRL trains on (model turns mask 1, observations mask 0) and the return."""
    import torch

    s = Session(url, token)
    try:
        obs = s.reset(task_id=task_id)
        o = obs["observation"]
        messages: list[dict[str, str]] = [{"role": "user", "content": o.get("prompt") or o.get("text") or ""}]
        prompt_ids: list[int] = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
        completion: list[int] = []
        mask: list[int] = []
        eos = tok.eos_token_id
        eos_text = tok.eos_token or ""
        reward = 0.0
        turns = 0
        boxed = 0
        for _ in range(a.max_turns):
            ctx = torch.tensor([prompt_ids + completion], device=model.device)
            with torch.no_grad():
                out = model.generate(ctx, attention_mask=torch.ones_like(ctx), do_sample=True, temperature=a.temperature, max_new_tokens=a.max_new_tokens, pad_token_id=tok.pad_token_id)
            gen = out[0, ctx.shape[1]:].tolist()
            completion += gen
            mask += [1] * len(gen)
            if not gen or gen[-1] != eos:
                completion.append(eos)
                mask.append(0)
            text = tok.decode(gen, skip_special_tokens=True)
            boxed += 1 if BOXED.search(text) else 0
            r = s.step(text)
            turns += 1
            if r.get("done"):
                reward = float(r.get("reward") or 0.0)
                break
            before = tok.apply_chat_template(messages + [{"role": "assistant", "content": text}], tokenize=False)
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": r["observation"].get("text") or ""}]
            after = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            # The observation's tokens as the chat template frames them: what follows the model's turn.
            tail = before[before.rfind(eos_text) + len(eos_text):] if eos_text and eos_text in before else ""
            env_ids = tok(tail + after[len(before):], add_special_tokens=False)["input_ids"]
            completion += env_ids
            mask += [0] * len(env_ids)
        shaped = reward + a.boxed_reward * boxed / max(1, turns)
        return {"prompt_ids": prompt_ids, "completion_ids": completion, "env_mask": mask, "reward": shaped, "spade_return": reward, "turns": turns}
    finally:
        s.close()


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    t0 = time.time()
    model, tok = load_model(a.model, a.gguf_file, device)
    listed = get_json(a.url, "/tasks", a.token)
    tasks: list[dict[str, Any]] = listed["tasks"]
    if not tasks:
        raise SystemExit("serve-env lists no task")
    emit("loaded", device=device, model=a.model, gguf_file=a.gguf_file, tasks=len(tasks), seconds=round(time.time() - t0, 1))
    rows = build_rows(tasks, a.hint_share, max(1, a.steps * a.prompts_per_step), rng)
    ds = Dataset.from_dict({"prompt": rows})

    def rollout(prompts: list[str], trainer: Any) -> dict[str, Any]:
        m = trainer.model
        was = m.training
        m.eval()
        eps = [play(m, tok, a.url, a.token, p, a) for p in prompts]
        if was:
            m.train()
        emit("rollout", episodes=len(eps), rewards=[e["reward"] for e in eps], spade_returns=[e["spade_return"] for e in eps], turns=[e["turns"] for e in eps], failed=sum(1 for e in eps if e.get("failed")))
        return {
            "prompt_ids": [e["prompt_ids"] for e in eps],
            "completion_ids": [e["completion_ids"] for e in eps],
            "logprobs": None,
            "env_mask": [e["env_mask"] for e in eps],
            "env_reward": [e["reward"] for e in eps],
        }

    def env_reward(prompts: list[Any], completions: list[Any], env_reward: list[float], **_: Any) -> list[float]:
        return [float(r) for r in env_reward]

    class Printer(TrainerCallback):  # type: ignore[misc]
        step_t = time.time()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if logs:
                now = time.time()
                print(json.dumps({"step": state.global_step, **{k: v for k, v in logs.items() if isinstance(v, (int, float))}, "step_seconds": round(now - Printer.step_t, 3)}), flush=True)
                Printer.step_t = now

    per_step = a.group_size * a.prompts_per_step
    cfg = GRPOConfig(
        output_dir=a.out,
        max_steps=a.steps,
        per_device_train_batch_size=per_step,
        num_generations=a.group_size,
        learning_rate=a.lr,
        beta=a.beta,
        logging_steps=1,
        save_strategy="steps" if a.save_every > 0 else "no",
        save_steps=max(1, a.save_every),
        report_to=[],
        use_cpu=device == "cpu",
        bf16=False,
        seed=a.seed,
        max_completion_length=a.max_new_tokens * a.max_turns * 8,
        disable_tqdm=True,
        shuffle_dataset=True,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[env_reward],
        args=cfg,
        train_dataset=ds,
        processing_class=tok,
        peft_config=LoraConfig(r=a.lora_rank, lora_alpha=2 * a.lora_rank, target_modules="all-linear", task_type="CAUSAL_LM"),
        rollout_func=rollout,
        callbacks=[Printer()],
    )
    # transformers also prints each log dict as a Python repr (disable_tqdm): the JSON lines above say it once.
    trainer.remove_callback(PrinterCallback)
    # The adapter as initialised, so what training changed can be checked against it.
    trainer.model.save_pretrained(os.path.join(a.out, "adapter-init"))
    trainer.train()
    final = os.path.join(a.out, "adapter-final")
    trainer.model.save_pretrained(final)
    tok.save_pretrained(final)
    emit("saved", adapter=final, seconds=round(time.time() - t0, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
