#!/usr/bin/env node
// Starts one server of an MCP host's configuration file the way a TypeScript host does (its command, args and
// env, over stdio) with the TypeScript SDK client, and lists its tools.
//
//   node config_client.mjs FILE KEY NAME      (KEY: mcpServers, or servers for VS Code)
//
// Prints one JSON line: {"command":...,"args":[...],"tools":[names...]}; exits 1 on a client-side error.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

const TIMEOUT_MS = 20_000;
const [file, key, name] = process.argv.slice(2);
if (!name) {
  console.error("usage: node config_client.mjs FILE KEY NAME");
  process.exit(2);
}
const entry = JSON.parse(readFileSync(file, "utf8"))[key]?.[name];
if (!entry) {
  console.error(`${file}: no ${key}.${name}`);
  process.exit(1);
}
const transport = new StdioClientTransport({
  command: entry.command,
  args: entry.args ?? [],
  env: { ...getDefaultEnvironment(), ...(entry.env ?? {}) },
  stderr: "inherit",
});
const client = new Client({ name: "truloop-config-client", version: "0.0.0" });
try {
  await client.connect(transport, { timeout: TIMEOUT_MS });
  const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
  process.stdout.write(
    JSON.stringify({ command: entry.command, args: entry.args ?? [], tools: tools.map((tool) => tool.name) }) + "\n",
  );
} catch (error) {
  console.error(`config_client.mjs: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}
