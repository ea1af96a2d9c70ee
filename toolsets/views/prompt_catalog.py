"""The prompts a host lists as commands: what each asks for, in English and Korean, and the messages it becomes.

Every prompt argument is a string on the wire; `PromptArg.kind` says what it must hold and `render` checks it
(`PromptArgumentsError` with a message that says what a good value looks like). Each prompt is offered only to callers
whose profile has the tools it uses (`needs`), and its messages name those tools and the resources to read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from toolsets.views.scope import ViewScope

ArgKind = Literal["people", "event", "text", "date", "minutes", "flag", "language", "tags"]
MAX_TEXT = 2000


class PromptArgumentsError(ValueError):
    """The arguments do not fit the prompt; `str()` says what to change."""


@dataclass(frozen=True, slots=True)
class PromptArg:
    name: str
    title: str
    description: str
    kind: ArgKind
    required: bool = False


@dataclass(frozen=True, slots=True)
class PromptSpec:
    name: str
    title: str
    description: str
    arguments: tuple[PromptArg, ...]
    needs: Callable[[ViewScope], bool]
    body: Callable[[Mapping[str, str], ViewScope], str]

    def argument(self, name: str) -> PromptArg | None:
        return next((arg for arg in self.arguments if arg.name == name), None)


def _has(*tools: str) -> Callable[[ViewScope], bool]:
    return lambda scope: any(tool in scope.tools for tool in tools)


def _all(*tools: str) -> Callable[[ViewScope], bool]:
    return lambda scope: all(tool in scope.tools for tool in tools)


def _plan_meeting(args: Mapping[str, str], scope: ViewScope) -> str:
    people = ", ".join(split_list(args["people"]))
    minutes = args.get("duration_minutes") or "60"
    window = ""
    if args.get("earliest_date") or args.get("latest_date"):
        window = f" between {args.get('earliest_date') or 'today'} and {args.get('latest_date') or 'two weeks later'}"
    return (
        f'Plan a meeting about "{args["topic"]}" with {people}, {minutes} minutes long{window}.\n\n'
        "1. Find each person with `search_users` (Korean or romanised names both work); if a name matches several "
        "people, ask me which one.\n"
        "2. Look at my schedule: read the resource `truloop://events` (or call `get_events`, and "
        "`get_calendar_events` for my device calendar) and pick a free slot.\n"
        "3. Create the event with `create_event` (title, start and end with offsets; set `availability_deadline` "
        "if the invitees should answer by a date).\n"
        "4. Invite the people with `invite_to_event`, then tell me what you booked.\n\n"
        f'회의 잡기: "{args["topic"]}", 참석자 {people}, {minutes}분. 위 순서대로 사람을 찾고, 일정을 확인하고, '
        "일정을 만들고 초대해 주세요."
    )


def _summarise_inbox(args: Mapping[str, str], scope: ViewScope) -> str:
    unread = parse_flag(args.get("unread_only"), default=True)
    language = "Korean" if args.get("language") == "ko" else "English" if args.get("language") == "en" else None
    which = "unread messages" if unread else "messages"
    return (
        f"Summarise the {which} in my inbox. Read the resource `truloop://inbox` (reading it marks nothing as read), "
        f"or call `get_inbox` with unread_only={'true' if unread else 'false'} (that marks them as read). "
        "Group them by sender, say what each wants and what I should answer first."
        + (f" Answer in {language}." if language else "")
        + "\n\n받은 메시지를 보낸 사람별로 요약하고, 먼저 답해야 할 것을 알려 주세요."
    )


def _find_in_docs(args: Mapping[str, str], scope: ViewScope) -> str:
    return (
        f'Find the answer in our docs: "{args["question"]}"\n\n'
        "Call `search_knowledge_base` with the key words (try Korean and English words), then read the best "
        "documents in full through their resources `truloop://docs/{path}` (the `source` of each hit). Quote the "
        "document you answer from; if nothing matches, say the docs have nothing on it rather than guessing.\n\n"
        f'우리 문서에서 찾기: "{args["question"]}". 찾은 문서를 인용해서 답해 주세요.'
    )


def _remember(args: Mapping[str, str], scope: ViewScope) -> str:
    tags = split_list(args.get("tags") or "")
    tagged = f" with the tags {', '.join(tags)}" if tags else ""
    return (
        f'Remember this for me{tagged}: "{args["content"]}"\n\n'
        "First call `search_memories` to see whether I already saved something like it; if so, tell me and ask "
        f"whether to replace it (`forget_memory`, then save). Otherwise call `save_memory`{tagged}.\n\n"
        f'이 내용을 기억해 주세요: "{args["content"]}"'
    )


def _prepare(args: Mapping[str, str], scope: ViewScope) -> str:
    event_id = args["event_id"]
    if scope.invitations_only:
        look = f'Call `get_event_details` with event_id "{event_id}" (or read `truloop://events/{event_id}`).'
        more = "Tell me the time, the place, the candidate dates and what I have submitted; remind me of the deadline."
    else:
        look = f"Read the resource `truloop://events/{event_id}` (or find it with `get_events`)."
        more = (
            "Then gather what I need: who is coming (`get_user_profile`), related notes (`search_memories`) and "
            "documents (`search_knowledge_base` on the title), and places if it has a location (`search_places`). "
            "Give me a short briefing and a checklist."
        )
    korean = "일정 준비: 일정 내용을 확인하고 간단한 브리핑을 해 주세요."
    return f"Prepare me for the event {event_id}. {look} {more}\n\n{korean}"


PEOPLE = PromptArg(
    "people", "People / 참석자",
    "Who to meet: names, usernames or emails, comma-separated (e.g. 김민지, bob) / 만날 사람(쉼표로 구분)",
    "people", required=True,
)  # fmt: skip
PROMPTS: tuple[PromptSpec, ...] = (
    PromptSpec(
        "plan_meeting", "Plan a meeting / 회의 잡기",
        "Find a time with people, create the event and invite them / 참석자와 시간을 정해 일정을 만들고 초대합니다",
        (
            PEOPLE,
            PromptArg("topic", "Topic / 주제", "What the meeting is about; also its title / 회의 주제(일정 제목)",
                      "text", required=True),
            PromptArg("duration_minutes", "Duration / 길이", "Length in minutes, 15-480 (default 60) / 회의 길이(분)",
                      "minutes"),
            PromptArg("earliest_date", "Earliest date / 시작일", "First possible day, YYYY-MM-DD / 가장 이른 날짜",
                      "date"),
            PromptArg("latest_date", "Latest date / 마감일", "Last possible day, YYYY-MM-DD / 가장 늦은 날짜", "date"),
        ),
        _all("search_users", "create_event", "invite_to_event"), _plan_meeting,
    ),
    PromptSpec(
        "summarise_inbox", "Summarise my inbox / 받은 메시지 요약",
        "Summarise the messages other users sent you / 다른 사용자가 보낸 메시지를 요약합니다",
        (
            PromptArg("unread_only", "Unread only / 안 읽은 것만", "true (default) or false / true 또는 false", "flag"),
            PromptArg("language", "Language / 언어", "ko or en (default: the conversation's) / ko 또는 en",
                      "language"),
        ),
        _has("get_inbox"), _summarise_inbox,
    ),
    PromptSpec(
        "find_in_docs", "Find in our docs / 문서에서 찾기",
        "Answer a question from the team's documents / 팀 문서에서 답을 찾습니다",
        (PromptArg("question", "Question / 질문", "What to look for / 찾을 내용", "text", required=True),),
        _has("search_knowledge_base"), _find_in_docs,
    ),
    PromptSpec(
        "remember_this", "Remember this / 기억하기",
        "Save something to remember later / 나중에 기억할 내용을 저장합니다",
        (
            PromptArg("content", "What to remember / 기억할 내용", "The fact or note / 저장할 내용", "text",
                      required=True),
            PromptArg("tags", "Tags / 태그", "Comma-separated tags, optional / 쉼표로 구분한 태그", "tags"),
        ),
        _has("save_memory"), _remember,
    ),
    PromptSpec(
        "prepare_for_event", "Prepare for an event / 일정 준비",
        "A briefing and checklist for one of your events / 내 일정을 위한 브리핑과 준비 목록",
        (PromptArg("event_id", "Event / 일정", "The event's id (completion offers yours) / 일정 id", "event",
                   required=True),),
        _has("get_events", "get_event_details"), _prepare,
    ),
)  # fmt: skip


def prompts_for(scope: ViewScope) -> list[PromptSpec]:
    return [prompt for prompt in PROMPTS if prompt.needs(scope)]


def find_prompt(scope: ViewScope, name: str) -> PromptSpec:
    for prompt in prompts_for(scope):
        if prompt.name == name:
            return prompt
    names = ", ".join(prompt.name for prompt in prompts_for(scope))
    raise PromptArgumentsError(f"Unknown prompt {name!r}; the prompts you can use are: {names}.")


def check_arguments(prompt: PromptSpec, given: Mapping[str, str] | None) -> dict[str, str]:
    """The arguments, trimmed and checked against the prompt's; `PromptArgumentsError` says what is wrong."""
    given = dict(given or {})
    unknown = sorted(set(given) - {arg.name for arg in prompt.arguments})
    if unknown:
        expected = ", ".join(arg.name for arg in prompt.arguments)
        raise PromptArgumentsError(
            f"{prompt.name} has no argument {', '.join(unknown)}; its arguments are: {expected}."
        )
    checked: dict[str, str] = {}
    for arg in prompt.arguments:
        value = given.get(arg.name)
        value = value.strip() if isinstance(value, str) else value
        if value is None or value == "":
            if arg.required:
                raise PromptArgumentsError(f"{prompt.name} needs {arg.name}: {arg.description}.")
            continue
        if not isinstance(value, str):
            raise PromptArgumentsError(f"{arg.name} must be a string.")
        checked[arg.name] = _checked(arg, value)
    first, last = checked.get("earliest_date"), checked.get("latest_date")
    if first and last and last < first:
        raise PromptArgumentsError(
            f"latest_date ({last}) is before earliest_date ({first}); give a range that runs forward."
        )
    return checked


def render(prompt: PromptSpec, arguments: Mapping[str, str], scope: ViewScope) -> str:
    return prompt.body(arguments, scope)


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.replace("、", ",").split(",") if part.strip()]


def parse_flag(value: str | None, *, default: bool) -> bool:
    if value is None:
        return default
    return value.lower() in ("true", "yes", "1", "y", "예", "네")


def _checked(arg: PromptArg, value: str) -> str:
    if len(value) > MAX_TEXT:
        raise PromptArgumentsError(f"{arg.name} is too long ({len(value)} characters; at most {MAX_TEXT}).")
    if arg.kind == "people":
        if not split_list(value):
            raise PromptArgumentsError(f"{arg.name} must name at least one person, e.g. '김민지, bob'.")
        if len(split_list(value)) > 50:
            raise PromptArgumentsError(f"{arg.name} names more than 50 people; invite a group in several steps.")
    elif arg.kind == "date":
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise PromptArgumentsError(
                f"{arg.name} must be a date YYYY-MM-DD, e.g. 2026-03-10; got {value!r}."
            ) from None
        if len(value) != 10:
            raise PromptArgumentsError(f"{arg.name} must be a date YYYY-MM-DD, e.g. 2026-03-10; got {value!r}.")
    elif arg.kind == "minutes":
        if not value.isdigit() or not 15 <= int(value) <= 480:
            raise PromptArgumentsError(f"{arg.name} must be a whole number of minutes from 15 to 480; got {value!r}.")
    elif arg.kind == "flag":
        if value.lower() not in ("true", "false", "yes", "no", "1", "0", "y", "n", "예", "네", "아니요"):
            raise PromptArgumentsError(f"{arg.name} must be true or false; got {value!r}.")
    elif arg.kind == "language":
        if value not in ("ko", "en"):
            raise PromptArgumentsError(f"{arg.name} must be ko or en; got {value!r}.")
    elif arg.kind == "event" and (len(value) > 64 or any(char.isspace() for char in value)):
        raise PromptArgumentsError(f"{arg.name} must be an event id (completion offers yours); got {value!r}.")
    return value
