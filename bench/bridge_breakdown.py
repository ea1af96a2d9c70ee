"""Where a deferred round trip over Redis goes: the bridge alone (no HTTP, no MCP), stage by stage.

    .venv/bin/python bench/bridge_breakdown.py [--redis-url URL] [--calls 300]

One process holds a `DeviceBridge` over `RedisBackend` (a fresh key prefix) and a device: a task reading
`bridge.device_stream(user)` that answers each envelope with `bridge.answer(...)`, as the tool-message
route does after its checks. Each call is `call_device` -> result, timed in stages:

  deliver   call_device entered -> the envelope reaches the device's stream (store the call, presence
            check and PUBLISH devices in one script; this replica's own stream gets it at once)
  answer    the device's `bridge.answer` (the completion script: one EVALSHA; the waiter is on this
            replica, so the answer is neither stored nor published but handed over in memory)
  wake      answer returned -> call_device returns
  total     call_device entered -> returned

and the same on `InMemoryBridgeBackend` (the in-process floor). Redis command counts per call come from
`INFO commandstats` before and after. The keys are deleted at the end.
"""

from __future__ import annotations

import argparse
import functools
import secrets
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge.jsonrpc import RpcResponse
from bridge.pending import BackendFactory, InMemoryBridgeBackend, PendingCall
from bridge.redis_backend import RedisBackend
from bridge.service import DeviceBridge

USER = "bench-user"


async def command_stats(url: str) -> Counter[str]:
    import redis.asyncio as redis

    client = redis.from_url(url)
    try:
        stats = await client.info("commandstats")
    finally:
        await client.aclose()
    return Counter({name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()})


async def measure(backend: BackendFactory, calls: int, warmup: int) -> dict[str, list[float]]:
    bridge = DeviceBridge(backend, heartbeat=60.0)
    stages: dict[str, list[float]] = defaultdict(list)
    marks: dict[str, float] = {}
    async with bridge.running():
        listening = getattr(bridge.backend, "listening", None)
        if listening is not None:
            with anyio.fail_after(5):
                await listening.wait()
        ready = anyio.Event()

        async def device() -> None:
            import json

            async with bridge.device_stream(USER) as stream:
                ready.set()
                async for envelope in stream:
                    marks["delivered"] = time.perf_counter()
                    request = json.loads(envelope["data"])
                    response = RpcResponse(jsonrpc="2.0", id=request["id"], result={"status": "granted"})
                    await bridge.answer(USER, response)
                    marks["answered"] = time.perf_counter()

        async with anyio.create_task_group() as tg:
            tg.start_soon(device)
            await ready.wait()
            for n in range(warmup + calls):
                call = PendingCall(
                    call_id=secrets.token_hex(8),
                    tool_name="get_permission_status",
                    method="permissions.getStatus",
                    params={"permission": "location"},
                    user_id=USER,
                )
                started = time.perf_counter()
                response = await bridge.call_device(call, give_up_after=10)
                ended = time.perf_counter()
                assert response.result == {"status": "granted"}, response
                if n >= warmup:
                    stages["deliver"].append(marks["delivered"] - started)
                    stages["answer"].append(marks["answered"] - marks["delivered"])
                    stages["wake"].append(ended - marks["answered"])
                    stages["total"].append(ended - started)
            tg.cancel_scope.cancel()
    return stages


async def delete_keys(url: str, prefix: str) -> None:
    import redis.asyncio as redis

    client = redis.from_url(url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


def report(name: str, stages: dict[str, list[float]]) -> str:
    cells = [f"{statistics.median(stages[s]) * 1e3:7.3f}" for s in ("deliver", "answer", "wake", "total")]
    p99 = sorted(stages["total"])[int(len(stages["total"]) * 0.99) - 1] * 1e3
    return f"{name:<8}" + "".join(f"{c:>10}" for c in cells) + f"{p99:>10.3f}"


async def main_async(args: argparse.Namespace) -> None:
    prefix = f"truloop-bench-{secrets.token_hex(6)}:"
    memory = await measure(InMemoryBridgeBackend, args.calls, args.warmup)
    before = await command_stats(args.redis_url)
    try:
        redis = functools.partial(RedisBackend, args.redis_url, prefix=prefix)
        redis_stages = await measure(redis, args.calls, args.warmup)
    finally:
        await delete_keys(args.redis_url, prefix)
    after = await command_stats(args.redis_url)
    per_call = {
        name: (after[name] - before[name]) / (args.calls + args.warmup)
        for name in after
        if after[name] - before[name] >= args.calls
    }
    print(f"bridge round trip, {args.calls} calls after {args.warmup} warm-ups; p50 ms per stage, total p99")
    print(f"{'backend':<8}{'deliver':>10}{'answer':>10}{'wake':>10}{'total':>10}{'p99':>10}")
    print(report("memory", memory))
    print(report("redis", redis_stages))
    commands = ", ".join(f"{name} {count:.1f}" for name, count in sorted(per_call.items(), key=lambda kv: -kv[1]))
    print(f"redis commands per call (all clients of this Redis, so other users add noise): {commands}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    anyio.run(main_async, parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
