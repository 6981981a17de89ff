"""SPADE self-play generated game"""
import random
import re
from collections import deque

# Seed-pack game: walk from S to G on a 5x5 grid with walls, one step per turn.
# Layouts are regenerated until a path exists, and the shortest path always fits in the turn budget.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
_SIZE = 5


class GridWalkEnv:
    def __init__(self, max_turns=25):
        self.max_turns = max_turns
        self.turn = 0
        self.walls = set()
        self.pos = (0, 0)
        self.goal = (0, 0)
        self.done = False

    def _shortest(self, start):
        prev = {start: None}
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            if cell == self.goal:
                break
            for name, (dr, dc) in _MOVES.items():
                nxt = (cell[0] + dr, cell[1] + dc)
                if self._open(nxt) and nxt not in prev:
                    prev[nxt] = (cell, name)
                    queue.append(nxt)
        if self.goal not in prev:
            return None
        path, cell = [], self.goal
        while prev[cell] is not None:
            cell, name = prev[cell]
            path.append(name)
        return path[::-1]

    def _open(self, cell):
        return 0 <= cell[0] < _SIZE and 0 <= cell[1] < _SIZE and cell not in self.walls

    def _draw(self):
        rows = []
        for r in range(_SIZE):
            row = ""
            for c in range(_SIZE):
                if (r, c) == self.pos:
                    row += "S"
                elif (r, c) == self.goal:
                    row += "G"
                elif (r, c) in self.walls:
                    row += "#"
                else:
                    row += "."
            rows.append(row)
        return "\n".join(rows)

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        cells = [(r, c) for r in range(_SIZE) for c in range(_SIZE)]
        while True:
            picked = random.sample(cells, 9)
            self.pos, self.goal, self.walls = picked[0], picked[1], set(picked[2:])
            path = self._shortest(self.pos)
            if path is not None and len(path) >= 5:
                break
        obs = (
            "Walk from S to G. '#' is a wall, '.' is open floor; row 1 is the top.\n"
            f"{self._draw()}\n"
            "Each turn move one step with \\boxed{up}, \\boxed{down}, \\boxed{left} or \\boxed{right}. "
            f"You have {self.max_turns} moves."
        )
        return obs, {"walls": len(self.walls)}

    def solution(self):
        return [f"\\boxed{{{name}}}" for name in self._shortest(self.pos)]

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        move = match.group(1).strip().lower() if match else None
        if move not in _MOVES:
            obs = "Move with \\boxed{up}, \\boxed{down}, \\boxed{left} or \\boxed{right}."
        else:
            dr, dc = _MOVES[move]
            nxt = (self.pos[0] + dr, self.pos[1] + dc)
            if self._open(nxt):
                self.pos = nxt
                if self.pos == self.goal:
                    self.done = True
                    return "You reached G. You win!", 1.0, True, False, {"turn": self.turn}
                obs = f"You moved {move}.\n{self._draw()}"
            else:
                obs = f"A wall or the edge blocks {move}; you stay put.\n{self._draw()}"
        if self.turn >= self.max_turns:
            self.done = True
            route = " ".join(self._shortest(self.pos) or [])
            return f"{obs}\nOut of moves. From here the way was: {route}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
