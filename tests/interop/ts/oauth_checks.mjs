// OAuth mode end to end (tests/interop/oauth.sh): a real authorization server
// (oauth2-mock-server, which signs JWTs and serves its metadata and JWKS), Warden as
// the resource server, and the official TypeScript SDK (1.32.2) as a client that
// finds the authorization server through Warden's protected resource metadata and
// obtains its own token (client_credentials). Raw requests check each refusal.
//
//   node oauth_checks.mjs WARDEN_BIN PLUGINS_DIR WORK_DIR
//
// Prints one line per check ("name: ok" / "name: FAILED ..."); exits 1 if any failed.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { readFileSync, writeFileSync, existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { OAuth2Server } from 'oauth2-mock-server';
import { SignJWT, generateKeyPair } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [wardenBin, pluginsDir, workDir] = process.argv.slice(2);
let failures = 0;
function check(name, ok, detail = '') {
  if (ok) {
    console.log(`${name}: ok`);
  } else {
    failures += 1;
    console.log(`${name}: FAILED ${detail}`);
  }
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function freePort() {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// The authorization server. Like an RFC 9068 server, it makes the client the token's
// subject and the resource the client asked for (RFC 8707 `resource`) its audience.
const authServer = new OAuth2Server();
const firstKey = await authServer.issuer.keys.generate('RS256');
await authServer.start(0, '127.0.0.1');
const issuer = authServer.issuer.url;
authServer.service.on('beforeTokenSigning', (token, req) => {
  const basic = req.headers.authorization?.match(/^Basic (.+)$/i);
  const clientId = basic ? Buffer.from(basic[1], 'base64').toString().split(':')[0] : req.body.client_id;
  token.payload.sub = clientId;
  if (req.body.resource) token.payload.aud = req.body.resource;
});

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const resource = `${origin}/mcp`;
const policy = join(workDir, 'access.toml');
writeFileSync(policy, `
[[allow]]
scope = "text"
plugins = ["text"]

[[allow]]
scope = "clock"
tools = ["now", "weekday"]

[[allow]]
scope = "snippets"
prompts = ["review_code"]
resources = ["snippets://{language}/{name}"]

[[allow]]
scope = "snippets-all"
plugins = ["snippets"]

# A typo: grants nothing, and Warden says so at start.
[[allow]]
scope = "typo"
tools = ["slugfy"]
`);
const audit = join(workDir, 'oauth-audit.jsonl');
writeFileSync(audit, '');
const wardenLog = join(workDir, 'oauth-warden.log');
const warden = spawn(wardenBin, [
  'serve', '--plugins', pluginsDir, '--no-watch', '--http', `127.0.0.1:${port}`,
  '--oauth-issuer', issuer, '--resource', resource, '--access', policy, '--audit-log', audit,
], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, RUST_LOG: 'warden=debug' } });
let logText = '';
warden.stderr.on('data', (chunk) => { logText += chunk; });
let exited = null;
warden.on('exit', (code) => { exited = code; });

async function stop() {
  warden.kill('SIGTERM');
  writeFileSync(wardenLog, logText);
  await authServer.stop();
}

try {
  // Ready when /readyz answers 200 (the listener opens after the plugins load).
  let ready = false;
  for (let i = 0; i < 600 && exited === null && !ready; i++) {
    ready = await fetch(`${origin}/readyz`).then((r) => r.ok, () => false);
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  if (!ready) throw new Error(`warden did not become ready (exit ${exited}):\n${logText}`);

  const metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
  const listBody = (method, params = {}) => JSON.stringify({
    jsonrpc: '2.0', id: 1, method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  async function post(token, method, params = {}, name) {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
    };
    if (name) headers['mcp-name'] = name;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const response = await fetch(resource, { method: 'POST', headers, body: listBody(method, params) });
    return { status: response.status, challenge: response.headers.get('www-authenticate') ?? '', text: await response.text() };
  }

  // --- Discovery ----------------------------------------------------------------
  const anonymous = await post(undefined, 'tools/list');
  check('no token: 401', anonymous.status === 401, `got ${anonymous.status}`);
  check('no token: WWW-Authenticate points to the resource metadata',
    anonymous.challenge === `Bearer resource_metadata="${metadataUrl}"`, anonymous.challenge);
  for (const url of [metadataUrl, `${origin}/.well-known/oauth-protected-resource`]) {
    const document = await fetch(url).then((r) => r.json());
    check(`protected resource metadata at ${new URL(url).pathname}`,
      document.resource === resource && same(document.authorization_servers, [issuer])
        && same(document.scopes_supported, ['text', 'clock', 'snippets', 'snippets-all', 'typo']),
      JSON.stringify(document));
  }

  check('a policy name nothing serves is warned about at start',
    /access policy grants what no loaded plugin serves.*tool `slugfy`/.test(logText), logText.slice(0, 2000));

  // --- Two principals, each with their own SDK client and token -------------------
  async function connect(clientId, scope) {
    const provider = new ClientCredentialsProvider({
      clientId, clientSecret: `${clientId}-secret`, scope, expectedIssuer: issuer,
    });
    const client = new Client({ name: `oauth-${clientId}`, version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
    await client.connect(transport);
    return { client, provider, transport };
  }
  const alice = await connect('alice', 'text');
  const aliceTools = (await alice.client.listTools()).tools.map((t) => t.name).sort();
  check('alice (scope text) sees the text plugin only', same(aliceTools, ['change_case', 'slugify', 'text_stats']),
    JSON.stringify(aliceTools));
  const slug = await alice.client.callTool({ name: 'slugify', arguments: { text: 'Hello, Warden!' } });
  check('alice calls slugify', !slug.isError && slug.content?.[0]?.text === 'hello-warden', JSON.stringify(slug));
  check('alice sees no prompts', (await alice.client.listPrompts()).prompts.length === 0);
  check("alice's token is for Warden, from the issuer",
    (() => {
      const claims = JSON.parse(Buffer.from(alice.provider.tokens().access_token.split('.')[1], 'base64url'));
      return claims.aud === resource && claims.iss === issuer && claims.sub === 'alice';
    })());

  const bob = await connect('bob', 'clock snippets');
  const bobTools = (await bob.client.listTools()).tools.map((t) => t.name).sort();
  check('bob (scopes clock snippets) sees two single tools', same(bobTools, ['now', 'weekday']), JSON.stringify(bobTools));
  const bobPrompts = (await bob.client.listPrompts()).prompts.map((p) => p.name);
  check('bob sees the one prompt granted', same(bobPrompts, ['review_code']), JSON.stringify(bobPrompts));
  const bobTemplates = (await bob.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  check('bob sees the one template granted', same(bobTemplates, ['snippets://{language}/{name}']), JSON.stringify(bobTemplates));
  const bobResources = (await bob.client.listResources()).resources.map((r) => r.uri);
  check('bob sees no concrete resources', bobResources.length === 0, JSON.stringify(bobResources));
  const read = await bob.client.readResource({ uri: 'snippets://rust/read_file' });
  check('bob reads through the granted template', read.contents?.[0]?.text?.includes('fn read_file'), JSON.stringify(read).slice(0, 200));
  const weekday = await bob.client.callTool({ name: 'weekday', arguments: { date: '2026-12-01' } });
  check('bob calls weekday', !weekday.isError && /tuesday/i.test(weekday.content?.[0]?.text ?? ''), JSON.stringify(weekday));

  // --- Outside the grant: 403 insufficient_scope, with the scope that would do -----
  const bobToken = bob.provider.tokens().access_token;
  const forbidden = await post(bobToken, 'tools/call', { name: 'slugify', arguments: { text: 'x' } }, 'slugify');
  check('bob calling slugify: 403', forbidden.status === 403, `${forbidden.status} ${forbidden.text}`);
  check('bob calling slugify: insufficient_scope, scope="text"',
    forbidden.challenge.startsWith('Bearer error="insufficient_scope", scope="text"')
      && forbidden.challenge.includes(`resource_metadata="${metadataUrl}"`), forbidden.challenge);
  const index = await post(bobToken, 'resources/read', { uri: 'snippets://index' });
  check('bob reading snippets://index: 403 naming snippets-all',
    index.status === 403 && index.challenge.includes('scope="snippets-all"'), `${index.status} ${index.challenge}`);
  const prompt = await post(bobToken, 'prompts/get', { name: 'explain_snippet', arguments: { language: 'rust', name: 'read_file' } });
  check('bob getting another prompt: 403', prompt.status === 403, `${prompt.status} ${prompt.text}`);
  const unknown = await post(bobToken, 'tools/call', { name: 'no_such_tool', arguments: {} }, 'no_such_tool');
  check('an unknown tool is the handler\'s error, not a 403', unknown.status === 200 && unknown.text.includes('unknown tool'),
    `${unknown.status} ${unknown.text}`);

  // --- A 2025-11-25 session belongs to whoever opened it ----------------------------
  const aliceSession = alice.transport.sessionId;
  const hijack = (method, body) => fetch(resource, {
    method,
    headers: {
      authorization: `Bearer ${bobToken}`, 'content-type': 'application/json',
      accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
      'mcp-session-id': aliceSession, 'mcp-protocol-version': '2025-11-25',
    },
    body,
  });
  check('alice has a 2025-11-25 session', typeof aliceSession === 'string' && aliceSession.length > 0, String(aliceSession));
  const stolenPost = await hijack('POST', JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }));
  check("bob's token on alice's session: 404", stolenPost.status === 404, `${stolenPost.status}`);
  const stolenStream = await hijack('GET');
  check("bob opening alice's stream: 404", stolenStream.status === 404, `${stolenStream.status}`);
  const stillAlice = (await alice.client.listTools()).tools.length;
  check("alice's session still works", stillAlice === 3, `${stillAlice}`);

  // --- Tokens that must be refused: 401 invalid_token, nothing reaches a plugin ---
  const now = Math.floor(Date.now() / 1000);
  const claims = (extra = {}) => ({ iss: issuer, sub: 'mallory', aud: resource, scope: 'text', iat: now, nbf: now - 10, exp: now + 600, ...extra });
  const build = (transform, opts = {}) => authServer.issuer.buildToken({
    ...opts,
    scopesOrTransform: (header, payload) => transform(header, payload),
  });
  const withClaims = (extra, opts) => build((_h, payload) => Object.assign(payload, claims(extra)), opts);
  const goodToken = await withClaims({});
  const good = await post(goodToken, 'tools/list');
  check('a token built directly by the server is accepted', good.status === 200 && good.text.includes('slugify'),
    `${good.status} ${good.text.slice(0, 200)}`);

  const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const { privateKey: strangerKey } = await generateKeyPair('RS256');
  const signWith = (key, header, payload) => new SignJWT(payload).setProtectedHeader(header).sign(key);
  const refusals = {
    expired: await withClaims({ exp: now - 3600, nbf: now - 7200, iat: now - 7200 }),
    'not yet valid (nbf)': await withClaims({ nbf: now + 3600 }),
    'nbf as a string (CVE-2026-25537)': await withClaims({ nbf: '99999999999' }),
    'exp as a string': await withClaims({ exp: '99999999999' }),
    'wrong audience': await withClaims({ aud: 'https://other.example.com/mcp' }),
    'wrong issuer': await withClaims({ iss: 'https://evil.example.com' }),
    'no subject': await build((_h, payload) => Object.assign(payload, claims(), { sub: undefined })),
    'no audience': await build((_h, payload) => Object.assign(payload, claims(), { aud: undefined })),
    'unsigned (alg none)': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`,
    'wrong key, real key id': await signWith(strangerKey, { alg: 'RS256', kid: firstKey.kid }, claims()),
    'wrong key, unknown key id': await signWith(strangerKey, { alg: 'RS256', kid: 'stranger' }, claims()),
    'HS256 with the public key as secret': await signWith(
      new TextEncoder().encode(firstKey.n), { alg: 'HS256', kid: firstKey.kid }, claims()),
    'signature of another token': (() => {
      const [h, , s] = goodToken.split('.');
      return `${h}.${b64(claims({ scope: 'text clock snippets snippets-all' }))}.${s}`;
    })(),
    malformed: 'not-a-jwt',
    'three garbage parts': 'a.b.c',
  };
  for (const [name, token] of Object.entries(refusals)) {
    const refused = await post(token, 'tools/call', { name: 'slugify', arguments: { text: 'x' } }, 'slugify');
    check(`refused: ${name}`,
      refused.status === 401 && refused.challenge.startsWith('Bearer error="invalid_token"')
        && refused.challenge.includes(`resource_metadata="${metadataUrl}"`),
      `${refused.status} ${refused.challenge}`);
  }
  // `Bearer ` with nothing after it is no token at all: the plain challenge (RFC 6750 §3.1).
  const empty = await post('', 'tools/list');
  check('an empty bearer token is no token: 401 with the plain challenge',
    empty.status === 401 && empty.challenge === `Bearer resource_metadata="${metadataUrl}"`, `${empty.status} ${empty.challenge}`);
  const basic = await fetch(resource, { method: 'POST', headers: { authorization: 'Basic YWxpY2U6eA==', 'content-type': 'application/json' }, body: listBody('tools/list') });
  check('refused: another scheme (Basic)', basic.status === 401, `${basic.status}`);

  // --- Key rotation: a token signed with a key added after Warden started --------
  const rotated = await authServer.issuer.keys.generate('RS256');
  const rotatedToken = await withClaims({}, { kid: rotated.kid });
  // Warden fetches the key set again for an unknown key id, at most once per 5 s:
  // the refusals above may have just used that turn, so ask until it is accepted.
  let rotatedStatus = 0;
  for (let i = 0; i < 40 && rotatedStatus !== 200; i++) {
    rotatedStatus = (await post(rotatedToken, 'tools/list')).status;
    if (rotatedStatus !== 200) await new Promise((r) => setTimeout(r, 250));
  }
  check('a key added to the JWKS after start is fetched on its first use', rotatedStatus === 200, `${rotatedStatus}`);

  // --- The policy file is reloaded when it changes; a broken one changes nothing ----
  const replacePolicy = (text) => {
    writeFileSync(`${policy}.tmp`, text);
    renameSync(`${policy}.tmp`, policy);
  };
  const waitFor = async (predicate) => {
    for (let i = 0; i < 100; i++) {
      if (await predicate()) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };
  replacePolicy('[[allow]]\nscope = "text"\nplugins = ["text", "clock"\n');
  check('a broken policy file is reported', await waitFor(() => logText.includes('the policy in force stays')), logText.slice(-1500));
  const unchanged = (await alice.client.listTools()).tools.length;
  check('…and the policy in force stays', unchanged === 3, `${unchanged}`);
  replacePolicy('[[allow]]\nscope = "text"\nplugins = ["text", "clock"]\n');
  const widened = await waitFor(async () => (await alice.client.listTools()).tools.length === 7);
  check('an edited policy takes effect without a restart (alice now sees text and clock)', widened);
  const reloaded = await fetch(metadataUrl).then((r) => r.json());
  check('the metadata names the new policy\'s scopes', same(reloaded.scopes_supported, ['text']), JSON.stringify(reloaded));

  await alice.client.close();
  await bob.client.close();

  // --- The audit trail: who did what; nothing from refused tokens -----------------
  const records = readFileSync(audit, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const summary = records.map((r) => `${r.principal}:${r.kind}:${r.target}:${r.outcome}`);
  check('audit: exactly the calls made, each with its principal', same(summary, [
    'alice:tool-call:slugify:ok',
    'bob:resource-read:snippets://rust/read_file:ok',
    'bob:tool-call:weekday:ok',
    'bob:tool-call:slugify:forbidden',
    'bob:resource-read:snippets://index:forbidden',
    'bob:prompt-get:explain_snippet:forbidden',
  ]), JSON.stringify(summary));
  check('the token never appears in the log or audit trail',
    !logText.includes(bobToken) && !readFileSync(audit, 'utf8').includes(bobToken.split('.')[2]));
} catch (error) {
  failures += 1;
  console.log(`oauth checks: FAILED ${error.stack ?? error}`);
} finally {
  await stop();
}
if (existsSync(wardenLog) && failures > 0) console.log(`(warden's log: ${wardenLog})`);
process.exit(failures === 0 ? 0 : 1);
