// Shared by the MCP scenarios: connect the official SDK client to a command, call tools, and
// apply a §delta§ independently of sqz, so the round trip is checked by a second implementation.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createHash } from "node:crypto";
import assert from "node:assert/strict";

export { assert };

export async function connect(command, args, { env = {}, cwd, roots } = {}) {
  const transport = new StdioClientTransport({
    command,
    args,
    cwd,
    env: { ...process.env, ...env },
    stderr: "inherit",
  });
  const capabilities = roots ? { roots: { listChanged: true } } : {};
  const client = new Client({ name: "sqz-tests", version: "1.0.0" }, { capabilities });
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((dir) => ({ uri: "file://" + dir, name: dir })),
    }));
  }
  await client.connect(transport);
  return { client, transport };
}

export function text(result) {
  assert.equal(result.content.length, 1, JSON.stringify(result));
  assert.equal(result.content[0].type, "text");
  return result.content[0].text;
}

export async function call(client, name, args) {
  return client.callTool({ name, arguments: args });
}

export function hash16(textOrBytes) {
  return createHash("sha256").update(textOrBytes).digest("hex").slice(0, 16);
}

// Applies a delta as SPEC §5 describes it, written from the spec alone.
export function applyDelta(base, delta) {
  const lines = delta.split("\n");
  assert.match(lines[0], /^§delta:[0-9a-f]{16}§$/);
  if (lines[lines.length - 1] === "") lines.pop();
  const old = base.match(/[^\n]*\n|[^\n]+$/g) || [];
  let at = 0;
  let out = "";
  for (let k = 1; k < lines.length; k++) {
    const line = lines[k];
    const noNewline = lines[k + 1] === "\\ No newline at end of file";
    const skip = /^ @@ skip (\d+) unchanged lines @@$/.exec(line);
    if (skip) {
      const n = Number(skip[1]);
      out += old.slice(at, at + n).join("");
      at += n;
      continue;
    }
    const body = line.slice(1) + (noNewline ? "" : "\n");
    if (line[0] === " ") {
      assert.equal(old[at], body, `context line ${k + 1}`);
      out += old[at++];
    } else if (line[0] === "-") {
      assert.equal(old[at], body, `removed line ${k + 1}`);
      at++;
    } else if (line[0] === "+") {
      out += body;
    } else {
      assert.fail(`not a delta line: ${JSON.stringify(line)}`);
    }
    if (noNewline) k++;
  }
  assert.equal(at, old.length, "the delta covers the whole base");
  return out;
}
