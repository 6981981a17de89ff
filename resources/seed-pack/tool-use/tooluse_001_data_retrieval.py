"""Seed-pack tool-use environment: inventory value lookup (Data Retrieval).

ToolUseBaseEnv is injected by the loader, never imported (SPADE-FORMATS section 4).
"""
import json
import random

_CATALOG = {
    "garden": ["hose", "rake", "shovel", "planter", "sprinkler"],
    "kitchen": ["kettle", "skillet", "whisk", "colander", "grater"],
    "office": ["stapler", "monitor arm", "desk lamp", "shredder", "whiteboard"],
}


class InventoryValueEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0  # SPADE's base reset() raises: the game clears its own counters
        if seed is not None:
            random.seed(seed)
        products = {}
        number = 100
        for category, names in _CATALOG.items():
            for name in random.sample(names, random.randint(2, 4)):
                number += random.randint(1, 9)
                products[f"P{number}"] = {
                    "name": name,
                    "category": category,
                    "price": round(random.randint(199, 4999) / 100, 2),
                    "stock": random.randint(0, 40),
                }
        category = random.choice(sorted(_CATALOG))
        total = sum(p["price"] * p["stock"] for p in products.values() if p["category"] == category)
        self._state = {"products": products, "category": category}
        self._expected_answer = f"{total:.2f}"
        self._tools = {
            "list_products": {
                "description": "List the product ids and names in one category.",
                "parameters": {
                    "type": "object",
                    "properties": {"category": {"type": "string", "description": "garden, kitchen or office"}},
                    "required": ["category"],
                },
            },
            "get_product": {
                "description": "Get the unit price and units in stock of one product.",
                "parameters": {
                    "type": "object",
                    "properties": {"product_id": {"type": "string", "description": "an id such as P105"}},
                    "required": ["product_id"],
                },
            },
        }
        obs = (f"What is the total stock value (unit price times units in stock, summed) of every product "
               f"in the {category} category? Give the amount in dollars, rounded to cents, inside <answer></answer>.")
        return obs, {}

    def tool_list_products(self, category):
        rows = [f"{pid}: {p['name']}" for pid, p in self._state["products"].items()
                if p["category"] == str(category).strip().lower()]
        if not rows:
            return f"No products in category '{category}'. Categories: garden, kitchen, office."
        return "\n".join(rows)

    def tool_get_product(self, product_id):
        product = self._state["products"].get(str(product_id).strip().upper())
        if product is None:
            return f"Unknown product id '{product_id}'."
        return json.dumps({"name": product["name"], "price": product["price"], "stock": product["stock"]})

    def solution(self):
        category = self._state["category"]
        messages = ['<tool_call>' + json.dumps({"name": "list_products", "arguments": {"category": category}}) + '</tool_call>']
        for pid, product in self._state["products"].items():
            if product["category"] == category:
                messages.append('<tool_call>' + json.dumps({"name": "get_product", "arguments": {"product_id": pid}}) + '</tool_call>')
        messages.append(f"<answer>{self._expected_answer}</answer>")
        return messages
