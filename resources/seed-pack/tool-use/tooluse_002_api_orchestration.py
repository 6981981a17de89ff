"""Seed-pack tool-use environment: pay an invoice in another currency (API Orchestration).

The answer needs two services chained: the invoice service gives amount and currency, the
rates service converts. ToolUseBaseEnv is injected by the loader.
"""
import json
import random

_RATES_TO_USD = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0067, "CHF": 1.12, "CAD": 0.73}


class InvoiceConversionEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0  # SPADE's base reset() raises: the game clears its own counters
        if seed is not None:
            random.seed(seed)
        currencies = sorted(_RATES_TO_USD)
        invoices = {}
        for _ in range(4):
            invoices[f"INV-{random.randint(1000, 9999)}"] = {
                "amount": round(random.randint(5000, 250000) / 100, 2),
                "currency": random.choice(currencies),
                "vendor": random.choice(["Nordlicht AG", "Parker & Sons", "Kumo KK", "Alpine Tools"]),
            }
        invoice_id = random.choice(sorted(invoices))
        pay_in = random.choice([c for c in currencies if c != invoices[invoice_id]["currency"]])
        rate = round(_RATES_TO_USD[invoices[invoice_id]["currency"]] / _RATES_TO_USD[pay_in], 6)
        self._state = {"invoices": invoices, "invoice_id": invoice_id, "pay_in": pay_in}
        self._expected_answer = f"{invoices[invoice_id]['amount'] * rate:.2f}"
        self._tools = {
            "get_invoice": {
                "description": "Fetch an invoice by id: vendor, amount and currency.",
                "parameters": {
                    "type": "object",
                    "properties": {"invoice_id": {"type": "string"}},
                    "required": ["invoice_id"],
                },
            },
            "get_exchange_rate": {
                "description": "Units of to_currency per one unit of from_currency (ISO codes).",
                "parameters": {
                    "type": "object",
                    "properties": {"from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
                    "required": ["from_currency", "to_currency"],
                },
            },
        }
        obs = (f"Invoice {invoice_id} must be paid in {pay_in}. How much is that in {pay_in}? "
               "Use the exchange rate service and give the amount rounded to two decimals inside <answer></answer>.")
        return obs, {}

    def tool_get_invoice(self, invoice_id):
        invoice = self._state["invoices"].get(str(invoice_id).strip().upper())
        if invoice is None:
            return f"No invoice '{invoice_id}'."
        return json.dumps(invoice)

    def tool_get_exchange_rate(self, from_currency, to_currency):
        src, dst = str(from_currency).strip().upper(), str(to_currency).strip().upper()
        if src not in _RATES_TO_USD or dst not in _RATES_TO_USD:
            return f"Unsupported currency pair {src}/{dst}. Supported: {', '.join(sorted(_RATES_TO_USD))}."
        return json.dumps({"from": src, "to": dst, "rate": round(_RATES_TO_USD[src] / _RATES_TO_USD[dst], 6)})

    def solution(self):
        invoice = self._state["invoices"][self._state["invoice_id"]]
        calls = [
            {"name": "get_invoice", "arguments": {"invoice_id": self._state["invoice_id"]}},
            {"name": "get_exchange_rate", "arguments": {"from_currency": invoice["currency"], "to_currency": self._state["pay_in"]}},
        ]
        return ["<tool_call>" + json.dumps(c) + "</tool_call>" for c in calls] + [f"<answer>{self._expected_answer}</answer>"]
