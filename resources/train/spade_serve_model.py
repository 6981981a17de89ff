"""An OpenAI-compatible chat server for a trained checkpoint, run in the training venv.

`spade-workbench train` evaluates the checkpoint as a model run through the workbench's own model
client (core/models/client.ts), which speaks OpenAI's /v1/chat/completions. This serves the base
model and the LoRA adapter from one process: the model name `base` answers with the adapter off,
`checkpoint` with it on, so both runs use the same weights and the same sampling. Requests that wait
at the same time are generated together (spade_batcher.py). Binds 127.0.0.1.

  python spade_serve_model.py --model DIR [--gguf-file F] --adapter DIR [--port P]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--gguf-file", default=None)
    p.add_argument("--adapter", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--max-batch", type=int, default=8)
    a = p.parse_args(argv)
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kw: dict[str, Any] = {"gguf_file": a.gguf_file} if a.gguf_file else {}
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok = AutoTokenizer.from_pretrained(a.model, **kw)
    base = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32, **kw).to(device)
    model = PeftModel.from_pretrained(base, a.adapter).to(device)
    model.eval()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from spade_batcher import Batcher, generate_batch

    batcher = Batcher(lambda key, prompts: generate_batch(model, tok, device, key, prompts, model.disable_adapter), max_batch=a.max_batch)

    def complete(body: dict[str, Any]) -> dict[str, Any]:
        name = str(body.get("model") or "checkpoint")
        if name not in ("base", "checkpoint"):
            raise ValueError(f"unknown model {name!r}: this server has base and checkpoint")
        msgs = [{"role": m["role"], "content": m.get("content") or ""} for m in body.get("messages", [])]
        ids = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True, return_dict=False)
        temp = float(body.get("temperature") if body.get("temperature") is not None else 1.0)
        max_new = min(int(body.get("max_tokens") or body.get("max_completion_tokens") or a.max_new_tokens), a.max_new_tokens)
        top_k = int(body.get("top_k") or 0)
        # Requests sampled alike share a batch (spade_batcher.py); each gets its own tokens back.
        new, ended = batcher.submit((name, temp, float(body.get("top_p") or 1.0), top_k, max_new), list(ids))
        text = tok.decode(new, skip_special_tokens=True)
        return {
            "id": f"chatcmpl-{int(time.time() * 1000)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop" if ended else "length"}],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": len(new), "total_tokens": len(ids) + len(new)},
        }

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def send_json(self, code: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                return self.send_json(200, {"object": "list", "data": [{"id": "base", "object": "model"}, {"id": "checkpoint", "object": "model"}]})
            if self.path == "/health":
                return self.send_json(200, {"status": "ok"})
            self.send_json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                return self.send_json(404, {"error": {"message": "not found"}})
            try:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                self.send_json(200, complete(body))
            except Exception as e:  # a bad request gets an error answer, never a dead server
                self.send_json(400, {"error": {"message": str(e)}})

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(json.dumps({"event": "listening", "url": f"http://127.0.0.1:{srv.server_address[1]}/v1", "device": device}), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
