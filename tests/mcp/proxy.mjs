// `sqz mcp proxy` in front of real upstream servers from npm, driven by the official MCP SDK
// client and compared with the same servers reached directly. Run by tests/mcp.rs.
import { readFileSync } from "node:fs";
import { connect, call, text, assert } from "./lib.mjs";

const { SQZ_BIN, SCRATCH, FS_SERVER, EVERYTHING_SERVER } = process.env;
const viaProxy = (upstream, flags = []) =>
  connect(SQZ_BIN, ["mcp", "proxy", ...flags, "--", process.execPath, ...upstream]);
const direct = (upstream) => connect(process.execPath, upstream);

// Filesystem server: tools listed plus sqz_expand, descriptions compacted.
{
  const upstream = [FS_SERVER, SCRATCH];
  const { client } = await viaProxy(upstream);
  const { client: plain } = await direct(upstream);
  assert.match(client.getInstructions() ?? "", /sqz_expand/);
  const proxied = (await client.listTools()).tools;
  const original = (await plain.listTools()).tools;
  assert.deepEqual(proxied.map((t) => t.name), [...original.map((t) => t.name), "sqz_expand"]);
  for (const [i, tool] of original.entries()) {
    assert.deepEqual(proxied[i].inputSchema, tool.inputSchema, "schemas pass through");
    const collapsed = tool.description.split(/\s+/).join(" ").trim();
    if (collapsed.length <= 400) {
      assert.equal(proxied[i].description, collapsed, tool.name);
    } else {
      assert.ok(proxied[i].description.length <= 401, tool.name);
      assert.ok(collapsed.startsWith(proxied[i].description.replace(/[.…]$/, "")), tool.name);
    }
  }

  // A read, then the same read again: a ref that expands to the first result byte for byte.
  const path = `${SCRATCH}/access.log`;
  const first = await call(client, "read_text_file", { path });
  const firstDirect = await call(plain, "read_text_file", { path });
  const firstText = text(first);
  assert.ok(firstText.length <= text(firstDirect).length);
  const again = text(await call(client, "read_text_file", { path }));
  assert.match(again, /^§ref:[0-9a-f]{16}§\n?$/);
  const expanded = await call(client, "sqz_expand", { ref: again.trim() });
  assert.equal(text(expanded), text(firstDirect), "expand is byte-exact");
  // Its own expand result is never compressed again, however often it is asked for.
  assert.equal(text(await call(client, "sqz_expand", { ref: again.trim() })), text(firstDirect));

  // Credentials are safe content: untouched every time, never stored, so never a ref.
  const secrets = { path: `${SCRATCH}/settings.env` };
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(await call(client, "read_text_file", secrets), await call(plain, "read_text_file", secrets));
  }

  // An error result passes through unchanged.
  const missing = { path: `${SCRATCH}/no-such-file.txt` };
  const err = await call(client, "read_text_file", missing);
  assert.equal(err.isError, true);
  assert.deepEqual(err, await call(plain, "read_text_file", missing));
  await plain.close();
  await client.close();
}

// --no-cache: nothing stored, so a repeat is sent again rather than referenced.
{
  const { client } = await viaProxy([FS_SERVER, SCRATCH], ["--no-cache", "--no-desc"]);
  const { client: plain } = await direct([FS_SERVER, SCRATCH]);
  const path = { path: `${SCRATCH}/access.log` };
  const first = text(await call(client, "read_text_file", path));
  assert.equal(text(await call(client, "read_text_file", path)), first);
  assert.ok(!first.includes("§ref:"));
  const tools = (await client.listTools()).tools;
  const original = (await plain.listTools()).tools;
  assert.equal(tools[0].description, original[0].description, "--no-desc keeps descriptions");
  await plain.close();
  await client.close();
}

// Everything server: image content passes through unchanged; lazy tool descriptions.
{
  const upstream = [EVERYTHING_SERVER];
  const { client } = await viaProxy(upstream, ["--lazy-tools"]);
  const { client: plain } = await direct(upstream);
  const image = await call(client, "get-tiny-image", {});
  assert.ok(image.content.some((c) => c.type === "image"));
  assert.deepEqual(image, await call(plain, "get-tiny-image", {}));
  const proxied = (await client.listTools()).tools;
  const original = (await plain.listTools()).tools;
  const names = proxied.map((t) => t.name);
  assert.ok(names.includes("sqz_expand") && names.includes("sqz_tool_help"));
  const long = original.find((t) => t.description.split(/\s+/).join(" ").includes(". "));
  assert.ok(long, "some tool has more than one sentence");
  const help = text(await call(client, "sqz_tool_help", { name: long.name }));
  assert.equal(help, long.description);
  const echo = text(await call(client, "echo", { message: "hello through sqz" }));
  assert.match(echo, /hello through sqz/);
  await plain.close();

  // Clean shutdown: closing stdin makes the proxy stop its upstream and exit 0 on its own.
  const { client: second, transport } = await viaProxy(upstream);
  const proxyPid = transport.pid;
  const upstreamPid = Number(readFileSync(`/proc/${proxyPid}/task/${proxyPid}/children`, "utf8").trim().split(" ")[0]);
  const exited = new Promise((resolve) => transport._process.once("exit", (code, signal) => resolve({ code, signal })));
  transport._process.stdin.end();
  assert.deepEqual(await exited, { code: 0, signal: null });
  assert.throws(() => process.kill(upstreamPid, 0), /ESRCH/, "the upstream is gone");
  await second.close().catch(() => {});
  await client.close();
}

// Upstream crash: a request in flight gets an error, not silence.
{
  const { client, transport } = await viaProxy([EVERYTHING_SERVER]);
  const proxyPid = transport.pid;
  const upstreamPid = Number(readFileSync(`/proc/${proxyPid}/task/${proxyPid}/children`, "utf8").trim().split(" ")[0]);
  const slow = call(client, "trigger-long-running-operation", { duration: 30, steps: 3 });
  setTimeout(() => process.kill(upstreamPid, "SIGKILL"), 300);
  await assert.rejects(slow, /upstream server exited/);
  await client.close().catch(() => {});
}

console.log("proxy scenario: ok");
