#!/usr/bin/env node
// A client of truloop-mcp with the TypeScript MCP SDK (@modelcontextprotocol/sdk), the SDK most hosts are
// built on: connect, list the tools, call two, and answer the confirmation a destructive tool asks for.
//
//   npm install                                              # once, in this folder
//   node client.mjs stdio /abs/path/.venv/bin/truloop-mcp [server flags...]
//   node client.mjs http http://127.0.0.1:8000/mcp           # a running `truloop-mcp --transport http`
//
// Over HTTP the token comes from TRULOOP_TOKEN (mint one with `truloop-mcp token --user alice` when the
// server has TRULOOP_JWT_SECRET). Set TRULOOP_DECLINE=1 to decline the confirmation instead of accepting it.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 20_000;
const [mode, target, ...serverArgs] = process.argv.slice(2);

function transportFor() {
  if (mode === "stdio" && target) {
    return new StdioClientTransport({ command: target, args: serverArgs, stderr: "inherit" });
  }
  if (mode === "http" && target) {
    const token = process.env.TRULOOP_TOKEN;
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  }
  console.error("usage: node client.mjs stdio SERVER_COMMAND [flags...] | node client.mjs http URL");
  process.exit(2);
}

const textOf = (result) =>
  (result.content ?? [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");

// Declaring elicitation lets the server ask before a destructive tool runs (a host shows a dialog here).
const client = new Client({ name: "truloop-example", version: "0.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  console.log(`asked: ${request.params.message}`);
  return process.env.TRULOOP_DECLINE ? { action: "decline" } : { action: "accept", content: { confirm: true } };
});

const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS });

try {
  await client.connect(transportFor(), { timeout: TIMEOUT_MS });
  const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
  console.log(`tools: ${tools.length}: ${tools.map((tool) => tool.name).join(", ")}`);

  const day = await call("get_day_of_week", { date: "2026-03-10" });
  console.log(`get_day_of_week: ${JSON.stringify(day.structuredContent)}`);

  const bad = await call("get_day_of_week", { date: "next Tuesday" });
  console.log(`get_day_of_week (a bad date): error: ${textOf(bad)}`); // isError: the model reads it and retries

  const saved = await call("save_memory", { content: "Prefers window seats on trains" });
  const memoryId = saved.structuredContent.id;
  console.log(`save_memory: ${memoryId}`);

  const forgotten = await call("forget_memory", { memory_id: memoryId });
  const outcome = forgotten.isError ? `error: ${textOf(forgotten)}` : JSON.stringify(forgotten.structuredContent);
  console.log(`forget_memory: ${outcome}`);
} catch (error) {
  console.error(`client.mjs: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}
