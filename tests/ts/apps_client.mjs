#!/usr/bin/env node
// What a TypeScript host sees of MCP Apps: two stdio sessions of the same server, one declaring the
// io.modelcontextprotocol/ui extension, one not; tools/list, resources/list and each app's resources/read.
//
//   node apps_client.mjs <server command> [server args...]
//
// Prints one JSON line per session: {"apps": bool, "tools": {name: tool}, "resources": [uri...], "read": {uri: {mimeType, size}}}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node apps_client.mjs <server command> [server args...]");
  process.exit(2);
}
const UI = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };

for (const apps of [true, false]) {
  const client = new Client({ name: "truloop-ts-apps", version: "0.0.0" }, { capabilities: apps ? { extensions: UI } : {} });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  const tools = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool]));
  const resources = (await client.listResources()).resources.map((r) => r.uri);
  const read = {};
  for (const uri of ["ui://truloop/availability.html", "ui://truloop/event.html", "ui://truloop/confirm.html"]) {
    const contents = (await client.readResource({ uri })).contents[0];
    read[uri] = { mimeType: contents.mimeType, size: contents.text.length };
  }
  process.stdout.write(JSON.stringify({ apps, tools, resources, read }) + "\n");
  await client.close();
}
