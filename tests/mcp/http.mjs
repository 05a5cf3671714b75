// `sqz mcp --transport http` through the SDK's Streamable HTTP client transport.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { assert, call, text } from "./lib.mjs";

const client = new Client({ name: "sqz-tests", version: "1.0.0" });
// The bearer token sqz printed when it started, as a client config passes it.
const headers = { Authorization: `Bearer ${process.env.MCP_TOKEN}` };
await client.connect(
  new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), { requestInit: { headers } }),
);
assert.equal(client.getServerVersion().name, "sqz");
const { tools } = await client.listTools();
assert.ok(tools.some((t) => t.name === "sqz_read_file"));
assert.equal(text(await call(client, "passthrough", { text: "over http" })), "over http");
await client.close();
console.log("http scenario: ok");
