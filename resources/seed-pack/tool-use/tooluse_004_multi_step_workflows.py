"""Seed-pack tool-use environment, MULTI-TURN: a help-desk ticket workflow (Multi-Step Workflows).

The user gives four requests one after another; each tool returns its text plus
self._advance_if_done(), which moves to the next request once the current criterion holds (the game
defines it: SPADE's base class has none). Every criterion is false at reset (no tickets exist yet).
ToolUseBaseEnv is injected by the loader.
"""
import json
import random

_TITLES = ["Printer jams on floor 3", "VPN drops every hour", "Laptop battery swelling",
           "Shared drive is read-only", "Badge reader rejects card"]
_AGENTS = ["amara", "björn", "chloe", "dmitri", "esi"]
_TAGS = ["hardware", "network", "urgent", "facilities", "access"]


class TicketDeskEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0  # SPADE's base reset() raises: the game clears its own counters
        if seed is not None:
            random.seed(seed)
        title = random.choice(_TITLES)
        priority = random.choice(["low", "medium", "high"])
        agent = random.choice(_AGENTS)
        tag = random.choice(_TAGS)
        self._state = {"tickets": {}, "next_id": random.randint(100, 900),
                       "goal": {"title": title, "priority": priority, "agent": agent, "tag": tag}}
        self._user_messages = [
            f"Please open a ticket titled '{title}' with {priority} priority.",
            f"Assign that ticket to {agent}.",
            f"Tag it '{tag}'.",
            "Now close the ticket, and tell me when everything is done.",
        ]
        self._message_criteria = [
            lambda s: self._ticket(s) is not None,
            lambda s: (self._ticket(s) or {}).get("assignee") == s["goal"]["agent"],
            lambda s: s["goal"]["tag"] in (self._ticket(s) or {}).get("tags", []),
            lambda s: (self._ticket(s) or {}).get("status") == "closed",
        ]
        self._current_msg = 0
        self._expected_answer = "done"
        self._tools = {
            "create_ticket": {
                "description": "Open a ticket; returns its id.",
                "parameters": {
                    "type": "object",
                    "properties": {"title": {"type": "string"},
                                   "priority": {"type": "string", "enum": ["low", "medium", "high"]}},
                    "required": ["title", "priority"],
                },
            },
            "assign_ticket": {
                "description": "Assign a ticket to a support agent by user name.",
                "parameters": {
                    "type": "object",
                    "properties": {"ticket_id": {"type": "integer"}, "assignee": {"type": "string"}},
                    "required": ["ticket_id", "assignee"],
                },
            },
            "add_tag": {
                "description": "Add a tag to a ticket.",
                "parameters": {
                    "type": "object",
                    "properties": {"ticket_id": {"type": "integer"}, "tag": {"type": "string"}},
                    "required": ["ticket_id", "tag"],
                },
            },
            "close_ticket": {
                "description": "Close a ticket.",
                "parameters": {
                    "type": "object",
                    "properties": {"ticket_id": {"type": "integer"}},
                    "required": ["ticket_id"],
                },
            },
        }
        obs = (f"User: {self._user_messages[0]}\n"
               "Handle each request with the tools. When every request is finished, reply <answer>done</answer>.")
        return obs, {}

    def _advance_if_done(self):
        if self._current_msg >= len(self._message_criteria) or not self._message_criteria[self._current_msg](self._state):
            return ""
        self._current_msg += 1
        if self._current_msg < len(self._user_messages):
            return f"\n\nUser: {self._user_messages[self._current_msg]}"
        return "\n\nAll requests are complete. Reply with <answer>done</answer>."

    @staticmethod
    def _ticket(state):
        goal = state["goal"]
        for ticket in state["tickets"].values():
            if ticket["title"] == goal["title"] and ticket["priority"] == goal["priority"]:
                return ticket
        return None

    def _get(self, ticket_id):
        try:
            return self._state["tickets"].get(int(ticket_id))
        except (TypeError, ValueError):
            return None

    def tool_create_ticket(self, title, priority):
        priority = str(priority).strip().lower()
        if priority not in ("low", "medium", "high"):
            return "Priority must be low, medium or high." + self._advance_if_done()
        ticket_id = self._state["next_id"]
        self._state["next_id"] += 1
        self._state["tickets"][ticket_id] = {"title": str(title).strip(), "priority": priority,
                                             "assignee": None, "tags": [], "status": "open"}
        return f"Created ticket {ticket_id}." + self._advance_if_done()

    def tool_assign_ticket(self, ticket_id, assignee):
        ticket = self._get(ticket_id)
        if ticket is None:
            return f"No ticket {ticket_id}." + self._advance_if_done()
        ticket["assignee"] = str(assignee).strip().lower()
        return f"Ticket {ticket_id} assigned to {ticket['assignee']}." + self._advance_if_done()

    def tool_add_tag(self, ticket_id, tag):
        ticket = self._get(ticket_id)
        if ticket is None:
            return f"No ticket {ticket_id}." + self._advance_if_done()
        tag = str(tag).strip().lower()
        if tag not in ticket["tags"]:
            ticket["tags"].append(tag)
        return f"Ticket {ticket_id} tags: {', '.join(ticket['tags'])}." + self._advance_if_done()

    def tool_close_ticket(self, ticket_id):
        ticket = self._get(ticket_id)
        if ticket is None:
            return f"No ticket {ticket_id}." + self._advance_if_done()
        ticket["status"] = "closed"
        return f"Ticket {ticket_id} closed." + self._advance_if_done()

    def solution(self):
        goal, ticket_id = self._state["goal"], self._state["next_id"]
        calls = [
            {"name": "create_ticket", "arguments": {"title": goal["title"], "priority": goal["priority"]}},
            {"name": "assign_ticket", "arguments": {"ticket_id": ticket_id, "assignee": goal["agent"]}},
            {"name": "add_tag", "arguments": {"ticket_id": ticket_id, "tag": goal["tag"]}},
            {"name": "close_ticket", "arguments": {"ticket_id": ticket_id}},
        ]
        return ["<tool_call>" + json.dumps(c) + "</tool_call>" for c in calls] + ["<answer>done</answer>"]
