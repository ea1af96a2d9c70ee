#!/usr/bin/env node
// Runs a destructive tool as an MCP task (2025-11-25) with the TypeScript SDK client's experimental tasks API,
// the way a task-aware TypeScript host does: tools/list (the client learns execution.taskSupport), save a memory,
// then callToolStream(forget_memory) with a task; the server's confirmation arrives as elicitation, answered yes.
//
//   node tasks_client.mjs <server command> [server args...]
//
// Prints one JSON line per step on stdout:
//   {"step":"initialize","tasks":<the server's capabilities.tasks>}
//   {"step":"tools/list","taskSupport":{tool: "optional" | "required"}}
//   {"step":"elicitation","message":...,"relatedTask":...}
//   {"step":"stream","type":"taskCreated"|"taskStatus"|"result"|"error", ...}
//   {"step":"tasks/list","tasks":[{"taskId","status"}]}
// and exits 1 if a step raised (2 on bad usage).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node tasks_client.mjs <server command> [server args...]");
  process.exit(2);
}
const emit = (line) => process.stdout.write(JSON.stringify(line) + "\n");
const RELATED = "io.modelcontextprotocol/related-task";

const client = new Client({ name: "truloop-ts-tasks", version: "0.0.0" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  emit({ step: "elicitation", message: request.params.message, relatedTask: request.params._meta?.[RELATED] ?? null });
  return { action: "accept", content: { confirm: true } };
});

let failed = false;
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
try {
  await client.connect(transport);
  emit({ step: "initialize", tasks: client.getServerCapabilities()?.tasks ?? null });
  const listed = await client.listTools();
  emit({
    step: "tools/list",
    taskSupport: Object.fromEntries(
      listed.tools.filter((t) => t.execution?.taskSupport).map((t) => [t.name, t.execution.taskSupport]),
    ),
  });
  const saved = await client.callTool({ name: "save_memory", arguments: { content: "지난주 회의록은 폐기" } });
  const memoryId = saved.structuredContent.id;
  const stream = client.experimental.tasks.callToolStream(
    { name: "forget_memory", arguments: { memory_id: memoryId } },
    CallToolResultSchema,
    { task: { ttl: 60_000 } },
  );
  for await (const message of stream) {
    if (message.type === "result") {
      emit({ step: "stream", type: "result", isError: message.result.isError ?? false,
             structuredContent: message.result.structuredContent ?? null, memoryId });
    } else if (message.type === "error") {
      failed = true;
      emit({ step: "stream", type: "error", message: String(message.error?.message ?? message.error) });
    } else {
      emit({ step: "stream", type: message.type, taskId: message.task.taskId, status: message.task.status });
    }
  }
  const tasks = await client.experimental.tasks.listTasks();
  emit({ step: "tasks/list", tasks: tasks.tasks.map((t) => ({ taskId: t.taskId, status: t.status })) });
} catch (error) {
  failed = true;
  emit({ step: "exception", name: error?.name, code: error?.code, message: String(error?.message ?? error) });
} finally {
  await client.close();
}
process.exit(failed ? 1 : 0);
