#!/usr/bin/env node
// Drives an MCP server over stdio with the TypeScript SDK client, the way TypeScript hosts do
// (Claude Desktop, VS Code, Cursor, MCP Inspector): initialize, tools/list (the client then caches
// every tool's outputSchema and validates each later result's structuredContent), then a few calls.
//
//   node client.mjs <server command> [server args...]
//
// Prints one JSON line per step on stdout:
//   {"step":"initialize","protocolVersion":...,"serverInfo":...}
//   {"step":"tools/list","count":N,"withOutputSchema":M}
//   {"step":"call","label":...,"tool":...,"isError":...,"text":...,"structuredContent":...,"_meta":...}
//   {"step":"call","label":...,"tool":...,"exception":{"name":...,"code":...,"message":...}}
//   {"step":"elicitation","message":...,"answer":"decline"}
//   {"step":"era","protocolVersion":"2026-07-28","skipped":...}
// and exits 1 if any step raised a client-side exception (2 on bad usage).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 20_000;
const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node client.mjs <server command> [server args...]");
  process.exit(2);
}

let failures = 0;
const emit = (line) => process.stdout.write(JSON.stringify(line) + "\n");
const describe = (error) => ({
  name: error?.name ?? typeof error,
  code: error?.code ?? null,
  message: error instanceof Error ? error.message : String(error),
});

const client = new Client(
  { name: "truloop-ts-host-test", version: "0.0.0" },
  // Declaring elicitation makes the server ask before a destructive tool; we always decline.
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  emit({ step: "elicitation", message: request.params.message, answer: "decline" });
  return { action: "decline" };
});
client.onerror = (error) => {
  failures += 1;
  emit({ step: "client-error", exception: describe(error) });
};

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });

// The SDK keeps the negotiated version to itself; read it off the initialize response on the wire.
let negotiated = null;
let installed;
Object.defineProperty(transport, "onmessage", {
  configurable: true,
  get: () => installed,
  set: (handler) => {
    installed = (message, extra) => {
      if (negotiated === null && message?.result?.protocolVersion) negotiated = message.result.protocolVersion;
      return handler?.(message, extra);
    };
  },
});

async function call(label, name, toolArgs) {
  try {
    const result = await client.callTool({ name, arguments: toolArgs }, undefined, { timeout: TIMEOUT_MS });
    const text = (result.content ?? [])
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("\n");
    emit({
      step: "call",
      label,
      tool: name,
      isError: result.isError ?? false,
      text,
      structuredContent: result.structuredContent ?? null,
      _meta: result._meta ?? null,
    });
    return result;
  } catch (error) {
    failures += 1;
    emit({ step: "call", label, tool: name, exception: describe(error) });
    return null;
  }
}

try {
  await client.connect(transport, { timeout: TIMEOUT_MS });
  emit({
    step: "initialize",
    protocolVersion: negotiated,
    clientLatest: LATEST_PROTOCOL_VERSION,
    serverInfo: client.getServerVersion() ?? null,
    capabilities: client.getServerCapabilities() ?? null,
  });

  const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
  emit({
    step: "tools/list",
    count: tools.length,
    withOutputSchema: tools.filter((tool) => tool.outputSchema).length,
    names: tools.map((tool) => tool.name),
  });

  await call("success", "get_day_of_week", { date: "2026-03-10" });
  await call("validation", "get_day_of_week", { date: "not-a-date" });
  await call("unknown_tool", "no_such_tool", {});
  const saved = await call("save", "save_memory", { content: "Prefers window seats on trains", tags: ["travel"] });
  const memoryId = saved?.structuredContent?.id ?? "mem_missing";
  await call("declined", "forget_memory", { memory_id: memoryId });
  await call("still_there", "search_memories", { query: "window seats" });

  // The 2026-07-28 era: this SDK (1.x) always sends LATEST_PROTOCOL_VERSION in initialize and has no
  // option to offer another, so it can only be exercised once an SDK release speaks it.
  if (SUPPORTED_PROTOCOL_VERSIONS.includes("2026-07-28")) {
    emit({ step: "era", protocolVersion: "2026-07-28", skipped: false, note: "SDK lists it; not exercised here" });
  } else {
    emit({
      step: "era",
      protocolVersion: "2026-07-28",
      skipped: true,
      note: `@modelcontextprotocol/sdk supports ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")} only`,
    });
  }
} catch (error) {
  failures += 1;
  emit({ step: "fatal", exception: describe(error) });
} finally {
  await client.close().catch(() => {});
}
process.exit(failures === 0 ? 0 : 1);
