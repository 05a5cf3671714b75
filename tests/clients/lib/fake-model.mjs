// A scripted stand-in for the Anthropic Messages API, on loopback only.
//
//   node fake-model.mjs --script steps.json --log requests.jsonl [--port N]
//
// It prints `listening PORT` on stdout once it accepts connections, and runs until killed.
//
// steps.json is a JSON array; each step is what the model answers at that point of the
// conversation:
//   {"tool": "Bash", "input": {"command": "git status"}}   one tool call
//   {"text": "done"}                                       a final answer (ends the turn)
//   {"tool": "Bash", "input": {"command": "sqz expand {match}"},
//    "match": "§ref:([0-9a-f]+)", "otherwise": {"command": "echo none"}}
//                                       a tool call built from what the model has seen: the
//                                       first capture of `match` in any tool result so far
//                                       replaces {match} in every string of `input`; with no
//                                       match the call's input is `otherwise`
// The step is chosen by the number of assistant messages already in the request, so a retried
// request gets the same answer, and the answer never depends on timing. Past the last step the
// model answers "done".
//
// Requests that are not the main conversation (no tools offered: title and summary
// generation, quota probes) get a short fixed text. /v1/messages/count_tokens gets a count.
// Every request is appended to the log as one JSON line: {"n", "path", "main", "step", "body"}.

import http from "node:http";
import fs from "node:fs";
import { replaceInStrings } from "./harness.mjs";

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    out[key] = argv[i + 1];
  }
  return out;
}

const opts = args(process.argv.slice(2));
if (!opts.script || !opts.log) {
  console.error("usage: fake-model.mjs --script steps.json --log requests.jsonl [--port N]");
  process.exit(2);
}
const steps = JSON.parse(fs.readFileSync(opts.script, "utf8"));
const log = fs.openSync(opts.log, "a");
let served = 0;

// A rough, deterministic size for the usage fields: the client only displays it.
function estimateTokens(body) {
  return Math.max(1, Math.ceil(JSON.stringify(body.messages ?? body).length / 4));
}

function isMain(body) {
  return Array.isArray(body.tools) && body.tools.some((t) => t.name === "Bash");
}

function stepIndex(body) {
  return (body.messages ?? []).filter((m) => m.role === "assistant").length;
}

// Every tool result's text in the request, oldest first.
function toolResultTexts(body) {
  const texts = [];
  for (const m of body.messages ?? []) {
    if (m.role !== "user" || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type !== "tool_result") continue;
      if (typeof b.content === "string") texts.push(b.content);
      else if (Array.isArray(b.content))
        for (const part of b.content) if (part.type === "text") texts.push(part.text);
    }
  }
  return texts;
}

// A step's tool input, with {match} filled in from what the model has seen.
function toolInput(step, body) {
  if (!step.match) return step.input ?? {};
  const re = new RegExp(step.match);
  for (const text of toolResultTexts(body)) {
    const m = re.exec(text);
    if (m) return replaceInStrings(step.input ?? {}, "{match}", m[1] ?? m[0]);
  }
  return step.otherwise ?? {};
}

// The content blocks and stop reason the model answers with.
function answer(body) {
  if (!isMain(body)) {
    return { step: null, blocks: [{ type: "text", text: "Scripted session" }], stop: "end_turn" };
  }
  const k = stepIndex(body);
  const step = steps[k] ?? { text: "done" };
  if (step.tool) {
    const id = `toolu_${String(k).padStart(4, "0")}`;
    return {
      step: k,
      blocks: [{ type: "tool_use", id, name: step.tool, input: toolInput(step, body) }],
      stop: "tool_use",
    };
  }
  return { step: k, blocks: [{ type: "text", text: step.text ?? "done" }], stop: "end_turn" };
}

function message(body, reply) {
  return {
    id: `msg_${String(served).padStart(6, "0")}`,
    type: "message",
    role: "assistant",
    model: body.model ?? "claude-fake",
    content: reply.blocks,
    stop_reason: reply.stop,
    stop_sequence: null,
    usage: { input_tokens: estimateTokens(body), output_tokens: 16 },
  };
}

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function stream(res, body, reply) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "request-id": `req_${served}`,
  });
  const msg = message(body, reply);
  sse(res, "message_start", {
    type: "message_start",
    message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } },
  });
  reply.blocks.forEach((block, index) => {
    if (block.type === "tool_use") {
      sse(res, "content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      sse(res, "content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    } else {
      sse(res, "content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "text", text: "" },
      });
      sse(res, "content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text: block.text },
      });
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index });
  });
  sse(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason: reply.stop, stop_sequence: null },
    usage: { output_tokens: msg.usage.output_tokens },
  });
  sse(res, "message_stop", { type: "message_stop" });
  res.end();
}

function json(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "request-id": `req_${served}` });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    served += 1;
    const path = req.url.split("?")[0];
    let body = null;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : null;
    } catch {
      body = { unparsed: Buffer.concat(chunks).toString("utf8") };
    }
    if (req.method === "POST" && path.endsWith("/v1/messages/count_tokens")) {
      fs.writeSync(log, JSON.stringify({ n: served, path, main: false, step: null, body }) + "\n");
      return json(res, 200, { input_tokens: estimateTokens(body ?? {}) });
    }
    if (req.method === "POST" && path.endsWith("/v1/messages") && body) {
      const reply = answer(body);
      const main = reply.step !== null;
      fs.writeSync(log, JSON.stringify({ n: served, path, main, step: reply.step, body }) + "\n");
      if (body.stream) return stream(res, body, reply);
      return json(res, 200, message(body, reply));
    }
    fs.writeSync(
      log,
      JSON.stringify({ n: served, path, method: req.method, main: false, step: null, body }) + "\n",
    );
    return json(res, 404, {
      type: "error",
      error: { type: "not_found_error", message: `no such endpoint: ${path}` },
    });
  });
});

server.listen(Number(opts.port ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
