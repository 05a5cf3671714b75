// A scripted stand-in for the OpenAI Responses API (streaming), on 127.0.0.1 only, for the
// real Codex CLI to talk to as a custom model provider.
//
//   node fake-responses.mjs --script steps.json --log requests.jsonl
//
// It prints `listening PORT` on stdout once it accepts connections, and runs until killed.
//
// steps.json is a JSON array; each step is what the model answers at that point:
//   {"tool": "shell_command", "arguments": {"command": "git status"}}   one function call
//   {"text": "done"}                                                     a final answer
// In a call's arguments, `{hash}` stands for the last `sqz expand HASH` any earlier output
// named (`none` when there was none), so a script can expand what it was served.
// The step is the number of function calls already in the request's `input`, so a retried
// request gets the same answer and nothing depends on timing. Past the last step the model
// answers "done". A request that offers no tools (a title or a summary) gets a fixed text.
//
// Every POST is appended to the log as one JSON line: {"n", "path", "step", "body"}.

import http from "node:http";
import fs from "node:fs";

const opts = {};
for (let i = 2; i < process.argv.length; i += 2) {
  opts[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
}
if (!opts.script || !opts.log) {
  console.error("usage: fake-responses.mjs --script steps.json --log requests.jsonl");
  process.exit(2);
}
const steps = JSON.parse(fs.readFileSync(opts.script, "utf8"));
const log = fs.openSync(opts.log, "a");
let served = 0;

function outputsSoFar(body) {
  return (Array.isArray(body.input) ? body.input : [])
    .filter((item) => item.type === "function_call_output")
    .map((item) => (typeof item.output === "string" ? item.output : JSON.stringify(item.output)));
}

function lastHash(body) {
  let hash = "none";
  for (const output of outputsSoFar(body)) {
    for (const m of output.matchAll(/sqz expand ([0-9a-f]{6,})/g)) hash = m[1];
  }
  return hash;
}

function callsSoFar(body) {
  return (Array.isArray(body.input) ? body.input : []).filter((item) => item.type === "function_call")
    .length;
}

// The output item the model answers with, and the step it came from.
function answer(body) {
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (!hasTools) {
    return { step: null, item: text("Scripted session") };
  }
  const k = callsSoFar(body);
  const step = steps[k] ?? { text: "done" };
  if (step.tool) {
    const id = String(k).padStart(4, "0");
    return {
      step: k,
      item: {
        type: "function_call",
        id: `fc_${id}`,
        call_id: `call_${id}`,
        name: step.tool,
        arguments: JSON.stringify(step.arguments ?? {}).replaceAll("{hash}", lastHash(body)),
        status: "completed",
      },
    };
  }
  return { step: k, item: text(step.text ?? "done") };
}

function text(value) {
  return {
    type: "message",
    id: `msg_${String(served).padStart(6, "0")}`,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: value, annotations: [] }],
  };
}

function sse(res, type, payload) {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = { unparsed: Buffer.concat(chunks).toString("utf8") };
    }
    served += 1;
    const id = `resp_${String(served).padStart(6, "0")}`;
    const { step, item } = answer(body);
    fs.writeSync(log, JSON.stringify({ n: served, path: req.url, step, body }) + "\n");
    if (!req.url.endsWith("/responses")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no ${req.url} here` } }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const response = { id, object: "response", status: "in_progress", output: [] };
    sse(res, "response.created", { response });
    sse(res, "response.output_item.added", { output_index: 0, item });
    sse(res, "response.output_item.done", { output_index: 0, item });
    const size = Math.ceil(JSON.stringify(body.input ?? "").length / 4);
    sse(res, "response.completed", {
      response: {
        ...response,
        status: "completed",
        output: [item],
        usage: {
          input_tokens: size,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 16,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: size + 16,
        },
      },
    });
    res.end();
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
