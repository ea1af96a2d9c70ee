"""An example truloop-mcp plugin: counts the words of a text and remembers how many texts it has seen.

Copy it into your tools folder (`truloop-mcp --tools-dir DIR`) and it is served within a second;
edit it and the new version replaces it without a restart. Check it first with:

    truloop-mcp tools check examples/tools/word_stats.py
"""

import json
import re
import threading

TOOL_SPEC = {
    "name": "word_stats",
    "description": (
        "Count the words, sentences and characters of a text, and list its most frequent words. "
        "Use it when the user asks how long a text is or which words it repeats."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text to analyse", "minLength": 1},
            "top": {
                "type": "integer",
                "description": "How many frequent words to list",
                "minimum": 0,
                "maximum": 50,
                "default": 5,
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    "output_schema": {
        "type": "object",
        "properties": {
            "words": {"type": "integer"},
            "sentences": {"type": "integer"},
            "characters": {"type": "integer"},
            "top_words": {
                "type": "array",
                "items": {"type": "object", "properties": {"word": {"type": "string"}, "count": {"type": "integer"}}},
            },
            "texts_seen": {"type": "integer", "description": "Texts this server has analysed with this tool"},
        },
        "required": ["words", "sentences", "characters", "top_words", "texts_seen"],
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": False, "openWorldHint": False},
    "version": "1.0.0",
    "profiles": ["member", "notification-safe"],
    "timeout_s": 10,
}


class WordStats:
    """Lives as long as this version of the file: created once, closed when the file changes or goes."""

    def __init__(self, context):
        self.logger = context.logger
        self.state_file = context.data_dir / "texts_seen.json"  # the plugin's own folder, kept across versions
        self.lock = threading.Lock()  # sync run() is called from several threads at once
        self.texts_seen = json.loads(self.state_file.read_text())["count"] if self.state_file.exists() else 0

    def run(self, input_data, context):
        text = input_data["text"]
        context.report_progress(0, 2, "counting")
        words = re.findall(r"\w+", text.lower())
        counts = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: input_data.get("top", 5)]
        context.report_progress(1, 2, "ranking")
        with self.lock:
            self.texts_seen += 1
            seen = self.texts_seen
        context.logger.info("analysed %d words for %s", len(words), context.caller_id)
        return {
            "words": len(words),
            "sentences": len([s for s in re.split(r"[.!?]+", text) if s.strip()]),
            "characters": len(text),
            "top_words": [{"word": word, "count": count} for word, count in top],
            "texts_seen": seen,
        }

    def close(self):
        self.state_file.write_text(json.dumps({"count": self.texts_seen}))
        self.logger.info("saved the count (%d)", self.texts_seen)


def create(context):
    return WordStats(context)
