"""SPADE self-play generated game"""
import copy
import random
import re

# Seed-pack game: three-pile Nim against a scripted opponent. Whoever takes the last stone wins.
# The starting position always has a non-zero nim-sum, so the player moving first can force a win.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_MOVE = re.compile(r"^\s*(\d+)\D+(\d+)\s*$")


class NimDuelEnv:
    def __init__(self, max_turns=15):
        self.max_turns = max_turns
        self.turn = 0
        self.piles = []
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        while True:
            self.piles = [random.randint(1, 7) for _ in range(3)]
            if self.piles[0] ^ self.piles[1] ^ self.piles[2]:
                break
        obs = (
            "Nim with three piles. On your turn remove one or more stones from a single pile; "
            "then the opponent does the same. Whoever takes the last stone wins.\n"
            f"Piles: {self._show()}\n"
            "Move with \\boxed{PILE COUNT}, e.g. \\boxed{2 3} removes 3 stones from pile 2."
        )
        return obs, {"stones": sum(self.piles)}

    def _show(self):
        return ", ".join(f"pile {i + 1}: {n}" for i, n in enumerate(self.piles))

    @staticmethod
    def _winning_move(piles):
        nim_sum = 0
        for n in piles:
            nim_sum ^= n
        if nim_sum == 0:
            return None
        for i, n in enumerate(piles):
            if n ^ nim_sum < n:
                return i, n - (n ^ nim_sum)
        return None

    def _opponent(self):
        move = self._winning_move(self.piles)
        if move is None:
            biggest = max(range(3), key=lambda i: self.piles[i])
            move = (biggest, 1)
        self.piles[move[0]] -= move[1]
        return move

    def solution(self):
        sim = copy.deepcopy(self)
        actions = []
        while not sim.done and len(actions) < 50:
            pile, count = self._winning_move(sim.piles)
            action = f"\\boxed{{{pile + 1} {count}}}"
            actions.append(action)
            sim.step(action)
        return actions

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        parsed = _MOVE.match(match.group(1)) if match else None
        if parsed is None:
            return self._continue("Give a move as \\boxed{PILE COUNT}, for example \\boxed{1 2}.")
        pile, count = int(parsed.group(1)) - 1, int(parsed.group(2))
        if not 0 <= pile < 3 or not 1 <= count <= self.piles[pile]:
            return self._continue(f"Illegal move. Piles are {self._show()}.")
        self.piles[pile] -= count
        if sum(self.piles) == 0:
            self.done = True
            return "You took the last stone. You win!", 1.0, True, False, {"turn": self.turn}
        op_pile, op_count = self._opponent()
        said = f"You removed {count} from pile {pile + 1}. Opponent removed {op_count} from pile {op_pile + 1}."
        if sum(self.piles) == 0:
            self.done = True
            return f"{said} The opponent took the last stone. You lose.", 0.0, True, False, {"turn": self.turn}
        return self._continue(f"{said} Piles: {self._show()}.")

    def _continue(self, obs):
        if self.turn >= self.max_turns:
            self.done = True
            return (f"{obs} Out of turns. A winning line was always to leave piles whose "
                    "binary XOR is zero."), 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
