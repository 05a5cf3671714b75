// `sqz mcp` under the stateless 2026-07-28 revision, driven by the official 2.x SDK client:
// found with `server/discover`, then every request carries its version in `_meta`.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { readFileSync } from "node:fs";
import { assert, hash16 } from "./lib.mjs";

const { SQZ_BIN, SCRATCH } = process.env;
const text = (result) => {
  assert.equal(result.content[0].type, "text");
  return result.content[0].text;
};

// The second connection shares the store: its first read is already a reference.
for (const [i, mode] of [{ pin: "2026-07-28" }, "auto"].entries()) {
  const client = new Client({ name: "sqz-tests", version: "2.0.0" }, { versionNegotiation: { mode } });
  await client.connect(new StdioClientTransport({ command: SQZ_BIN, args: ["mcp"], cwd: SCRATCH, env: process.env, stderr: "inherit" }));
  assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28", JSON.stringify(mode));
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === "sqz_read_file"));
  const original = readFileSync(`${SCRATCH}/lib.rs`, "utf8");
  const read = async () => text(await client.callTool({ name: "sqz_read_file", arguments: { path: "lib.rs" } }));
  const ref = `§ref:${hash16(original)}§\n`;
  assert.ok((await read()).endsWith(i === 0 ? original : ref));
  assert.ok((await read()).endsWith(ref));
  assert.equal(text(await client.callTool({ name: "expand", arguments: { ref: hash16(original) } })), original);
  await client.close();
}
console.log("modern scenario: ok");
