// The TypeScript SDK's McpServer with get_day_of_week, for bench/peers/run.py.
//
//   node server.mjs           stdio (StdioServerTransport)
//   node server.mjs --http    streamable HTTP at /mcp, stateful (a session id per initialize), on node's http
//                             server bound to 127.0.0.1 on a free port, named on stderr:
//                             `serving http://127.0.0.1:PORT/mcp`
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

const DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

function dayOfWeek(date) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date.trim());
  const day = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!day || day.getUTCMonth() !== Number(match[2]) - 1 || day.getUTCDate() !== Number(match[3])) {
    throw new Error(`not an ISO date YYYY-MM-DD: ${date}`);
  }
  const weekday = day.getUTCDay();
  return { date: day.toISOString().slice(0, 10), day_of_week: DAY_NAMES[weekday], iso_weekday: weekday === 0 ? 7 : weekday };
}

function makeServer() {
  const server = new McpServer({ name: "typescript-peer", version: "1.0.0" });
  server.registerTool(
    "get_day_of_week",
    {
      description: "Return the day of the week (e.g. Tuesday) of an ISO date YYYY-MM-DD.",
      inputSchema: { date: z.string() },
      outputSchema: {
        date: z.string().describe("The date asked about, YYYY-MM-DD"),
        day_of_week: z.string().describe("English weekday name, e.g. Tuesday"),
        iso_weekday: z.number().int().describe("ISO weekday number: 1 = Monday ... 7 = Sunday"),
      },
    },
    async ({ date }) => {
      const result = dayOfWeek(date);
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  return server;
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined);
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

function jsonRpcError(res, status, message) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function serveHttp() {
  const transports = new Map(); // session id -> transport, as in the SDK's stateful example

  const http = createServer(async (req, res) => {
    try {
      if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") {
        res.writeHead(404).end();
        return;
      }
      const sessionId = req.headers["mcp-session-id"];
      const body = req.method === "POST" ? await readJson(req) : undefined;
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId || req.method !== "POST" || !isInitializeRequest(body)) {
          jsonRpcError(res, sessionId ? 404 : 400, sessionId ? "Session not found" : "Bad Request: no session id");
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) transports.delete(transport.sessionId);
        };
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) jsonRpcError(res, 500, String(error));
    }
  });
  http.listen(0, "127.0.0.1", () => {
    process.stderr.write(`serving http://127.0.0.1:${http.address().port}/mcp\n`);
  });
  const stop = () => {
    for (const transport of transports.values()) transport.close();
    http.close();
    http.closeAllConnections();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

if (process.argv.includes("--http")) {
  await serveHttp();
} else {
  await makeServer().connect(new StdioServerTransport());
}
