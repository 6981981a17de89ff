"""Seed-pack tool-use environment: pick the one right tool among several (Tool Selection).

Three tools are offered; each question can be answered by exactly one of them.
ToolUseBaseEnv is injected by the loader.
"""
import json
import random

_POPULATION = {"Lisbon": 545000, "Oslo": 709000, "Porto": 232000, "Graz": 291000, "Lyon": 522000}
_DISTANCES_KM = {("Lisbon", "Porto"): 313, ("Oslo", "Graz"): 1622, ("Lyon", "Graz"): 1003,
                 ("Porto", "Lyon"): 1290, ("Oslo", "Lisbon"): 2760}
_FACTORS = {("mi", "km"): 1.609344, ("km", "mi"): 0.621371, ("lb", "kg"): 0.453592, ("kg", "lb"): 2.204623}


class ToolboxRouterEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0  # SPADE's base reset() raises: the game clears its own counters
        if seed is not None:
            random.seed(seed)
        kind = random.choice(["population", "distance", "convert"])
        if kind == "population":
            city = random.choice(sorted(_POPULATION))
            question = f"How many people live in {city}, according to the city registry?"
            answer = str(_POPULATION[city])
            call = {"name": "city_population", "arguments": {"city": city}}
        elif kind == "distance":
            a, b = random.choice(sorted(_DISTANCES_KM))
            question = f"What is the road distance in kilometres between {a} and {b}?"
            answer = str(_DISTANCES_KM[(a, b)])
            call = {"name": "road_distance", "arguments": {"origin": a, "destination": b}}
        else:
            src, dst = random.choice(sorted(_FACTORS))
            value = random.randint(3, 250)
            question = f"Convert {value} {src} to {dst}, to two decimals."
            answer = f"{value * _FACTORS[(src, dst)]:.2f}"
            call = {"name": "convert_units", "arguments": {"value": value, "from_unit": src, "to_unit": dst}}
        self._state = {"kind": kind, "call": call}
        self._expected_answer = answer
        self._tools = {
            "city_population": {
                "description": "Registered population of a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
            "road_distance": {
                "description": "Road distance in km between two cities.",
                "parameters": {"type": "object",
                               "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
                               "required": ["origin", "destination"]},
            },
            "convert_units": {
                "description": "Convert a value between mi/km and lb/kg.",
                "parameters": {"type": "object",
                               "properties": {"value": {"type": "number"}, "from_unit": {"type": "string"},
                                              "to_unit": {"type": "string"}},
                               "required": ["value", "from_unit", "to_unit"]},
            },
        }
        return f"{question} Put only the number inside <answer></answer>.", {}

    def tool_city_population(self, city):
        name = str(city).strip().title()
        if name not in _POPULATION:
            return f"No registry entry for '{city}'."
        return json.dumps({"city": name, "population": _POPULATION[name]})

    def tool_road_distance(self, origin, destination):
        a, b = str(origin).strip().title(), str(destination).strip().title()
        km = _DISTANCES_KM.get((a, b)) or _DISTANCES_KM.get((b, a))
        if km is None:
            return f"No route known between {a} and {b}."
        return json.dumps({"origin": a, "destination": b, "km": km})

    def tool_convert_units(self, value, from_unit, to_unit):
        key = (str(from_unit).strip().lower(), str(to_unit).strip().lower())
        if key not in _FACTORS:
            return f"Cannot convert {key[0]} to {key[1]}."
        try:
            amount = float(value)
        except (TypeError, ValueError):
            return f"'{value}' is not a number."
        return json.dumps({"value": round(amount * _FACTORS[key], 4), "unit": key[1]})

    def solution(self):
        return ["<tool_call>" + json.dumps(self._state["call"]) + "</tool_call>",
                f"<answer>{self._expected_answer}</answer>"]
