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
// then what hosts show besides tools (resources, prompts, completion):
//   {"step":"resources/list","uris":[...],"nextCursor":...}, {"step":"resources/templates/list","templates":[...]}
//   {"step":"resources/read","uri":...,"mimeType":...,"text":...}
//   {"step":"prompts/list","prompts":[{"name","title","description","arguments"}]}
//   {"step":"prompts/get","name":...,"text":...}   {"step":"prompts/get","name":...,"refused":{"invalidParams","message"}}
//   {"step":"completion/complete","argument":...,"values":[...],"hasMore":...}
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

// What hosts show besides tools: resources (listed, read), prompts (listed as commands, got) and completion.
async function hostViews() {
  const options = { timeout: TIMEOUT_MS };
  const listed = await client.listResources(undefined, options);
  emit({ step: "resources/list", uris: listed.resources.map((r) => r.uri), nextCursor: listed.nextCursor ?? null });
  const { resourceTemplates } = await client.listResourceTemplates(undefined, options);
  emit({ step: "resources/templates/list", templates: resourceTemplates.map((t) => t.uriTemplate) });
  for (const uri of ["truloop://guide", ...listed.resources.map((r) => r.uri).filter((u) => u.startsWith("truloop://docs/")).slice(0, 1)]) {
    const { contents } = await client.readResource({ uri }, options);
    emit({ step: "resources/read", uri, mimeType: contents[0]?.mimeType ?? null, text: contents[0]?.text ?? null });
  }
  const { prompts } = await client.listPrompts(undefined, options);
  emit({
    step: "prompts/list",
    prompts: prompts.map((p) => ({ name: p.name, title: p.title ?? null, description: p.description ?? null, arguments: p.arguments ?? [] })),
  });
  const got = await client.getPrompt({ name: "find_in_docs", arguments: { question: "laptop setup" } }, options);
  emit({ step: "prompts/get", name: "find_in_docs", text: got.messages.map((m) => m.content?.text ?? "").join("\n") });
  try {
    await client.getPrompt({ name: "plan_meeting", arguments: { topic: "Roadmap" } }, options);
    emit({ step: "prompts/get", name: "plan_meeting", refused: null });
  } catch (error) {
    // An expected refusal (Invalid params); its code is reported as a flag, so that this line is never mistaken for
    // the -32602 of a schema rejection that the tests look for.
    const message = String(error?.message ?? "").replace(/^MCP error -?\d+: /, "");
    emit({ step: "prompts/get", name: "plan_meeting", refused: { invalidParams: error?.code === -32602, message } });
  }
  for (const [ref, argument, value] of [
    [{ type: "ref/prompt", name: "plan_meeting" }, "people", "min"],
    [{ type: "ref/resource", uri: "truloop://docs/{path}" }, "path", ""],
  ]) {
    const { completion } = await client.complete({ ref, argument: { name: argument, value } }, options);
    emit({ step: "completion/complete", argument, values: completion.values, hasMore: completion.hasMore ?? false });
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
  await hostViews();
} catch (error) {
  failures += 1;
  emit({ step: "fatal", exception: describe(error) });
} finally {
  await client.close().catch(() => {});
}
process.exit(failures === 0 ? 0 : 1);
