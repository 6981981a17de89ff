"""Seed-pack tool-use environment: read a sensor when its home region is down (Error Recovery).

The first region the task names always fails with an error that lists the healthy regions;
the agent must retry elsewhere. ToolUseBaseEnv is injected by the loader.
"""
import json
import random

_REGIONS = ["eu-west", "eu-north", "us-east", "us-west", "ap-south"]


class RegionFailoverEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0  # SPADE's base reset() raises: the game clears its own counters
        if seed is not None:
            random.seed(seed)
        down = random.choice(_REGIONS)
        healthy = sorted(r for r in _REGIONS if r != down and random.random() < 0.6) or [
            next(r for r in _REGIONS if r != down)]
        sensor = f"S-{random.randint(10, 99)}"
        reading = round(random.uniform(-5.0, 35.0), 1)
        self._state = {"down": down, "healthy": healthy, "sensor": sensor, "reading": reading}
        self._expected_answer = f"{reading:.1f}"
        self._tools = {
            "read_sensor": {
                "description": "Read the latest temperature (°C) of a sensor from one region's replica.",
                "parameters": {
                    "type": "object",
                    "properties": {"sensor_id": {"type": "string"}, "region": {"type": "string"}},
                    "required": ["sensor_id", "region"],
                },
            },
        }
        obs = (f"Sensor {sensor} is registered in region {down}. Report its latest temperature reading in °C "
               "(one decimal) inside <answer></answer>.")
        return obs, {}

    def tool_read_sensor(self, sensor_id, region):
        region = str(region).strip().lower()
        if str(sensor_id).strip().upper() != self._state["sensor"]:
            return f"Error 404: sensor '{sensor_id}' not found."
        if region == self._state["down"]:
            return (f"Error 503: region {region} is unavailable. Replicas are healthy in: "
                    f"{', '.join(self._state['healthy'])}.")
        if region not in self._state["healthy"]:
            return f"Error 502: region '{region}' holds no replica of this sensor."
        return json.dumps({"sensor": self._state["sensor"], "region": region, "celsius": self._state["reading"]})

    def solution(self):
        sensor = self._state["sensor"]
        calls = [
            {"name": "read_sensor", "arguments": {"sensor_id": sensor, "region": self._state["down"]}},
            {"name": "read_sensor", "arguments": {"sensor_id": sensor, "region": self._state["healthy"][0]}},
        ]
        return ["<tool_call>" + json.dumps(c) + "</tool_call>" for c in calls] + [f"<answer>{self._expected_answer}</answer>"]
