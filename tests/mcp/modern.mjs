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
// Through the proxy to a server of the handshake era: the probe falls back to initialize.
{
  const client = new Client({ name: "sqz-tests", version: "2.0.0" }, { versionNegotiation: { mode: "auto" } });
  const upstream = [process.execPath, process.env.FS_SERVER, SCRATCH];
  await client.connect(new StdioClientTransport({ command: SQZ_BIN, args: ["mcp", "proxy", "--", ...upstream], env: process.env, stderr: "inherit" }));
  assert.notEqual(client.getNegotiatedProtocolVersion(), "2026-07-28");
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("read_text_file") && names.includes("sqz_expand"));
  const path = `${SCRATCH}/lib.rs`;
  // The same bytes were read above through sqz mcp (one store): already a reference.
  const again = text(await client.callTool({ name: "read_text_file", arguments: { path } }));
  assert.equal(again, `§ref:${hash16(readFileSync(path))}§\n`);
  assert.equal(text(await client.callTool({ name: "sqz_expand", arguments: { ref: again.trim() } })), readFileSync(path, "utf8"));
  await client.close();
}
console.log("modern scenario: ok");
