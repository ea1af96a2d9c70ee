#!/usr/bin/env node
// What an MCP host built on the TypeScript SDK does when an HTTP server answers 401: from the 401 alone it
// finds the protected resource metadata (RFC 9728), the authorization server and that server's metadata
// (RFC 8414 / OpenID Connect), then runs the SDK's `auth()` flow up to the point where a user must sign in
// (the browser redirect), with a client registered beforehand.
//
//   node oauth_discovery.mjs <MCP server URL, e.g. http://127.0.0.1:PORT/mcp>
//
// Prints one JSON line per step on stdout:
//   {"step":"401","status":401,"resourceMetadataUrl":...,"error":...}
//   {"step":"discovery","authorizationServerUrl":...,"resource":...,"authorizationServers":[...],"issuer":...}
//   {"step":"resource","selected":...}
//   {"step":"auth","result":"REDIRECT","authorizationUrl":...}
//   {"step":"failed","exception":{"name":...,"message":...}}
// and exits 1 if a step failed (2 on bad usage).

import {
  auth,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  selectResourceURL,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

const [serverUrl] = process.argv.slice(2);
if (!serverUrl) {
  console.error("usage: node oauth_discovery.mjs <MCP server URL>");
  process.exit(2);
}
const emit = (line) => process.stdout.write(JSON.stringify(line) + "\n");

// A host whose client is registered with the authorization server beforehand (no dynamic registration),
// which stops where a person would sign in in a browser.
class RegisteredHost {
  redirected = null;
  saved = {};
  get redirectUrl() {
    return "http://127.0.0.1:33418/callback";
  }
  get clientMetadata() {
    return { client_name: "truloop-ts-host-test", redirect_uris: [this.redirectUrl] };
  }
  clientInformation() {
    return { client_id: "truloop-ts-host-test" };
  }
  tokens() {
    return undefined;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.redirected = url;
  }
  saveCodeVerifier(verifier) {
    this.saved.codeVerifier = verifier;
  }
  codeVerifier() {
    return this.saved.codeVerifier;
  }
}

try {
  const response = await fetch(serverUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "truloop-ts-host-test", version: "0.0.0" },
      },
    }),
  });
  await response.body?.cancel();
  const { resourceMetadataUrl, error } = extractWWWAuthenticateParams(response);
  emit({ step: "401", status: response.status, resourceMetadataUrl: resourceMetadataUrl?.href ?? null, error: error ?? null });

  const info = await discoverOAuthServerInfo(serverUrl, { resourceMetadataUrl });
  emit({
    step: "discovery",
    authorizationServerUrl: String(info.authorizationServerUrl),
    resource: info.resourceMetadata?.resource ?? null,
    authorizationServers: info.resourceMetadata?.authorization_servers ?? null,
    issuer: info.authorizationServerMetadata?.issuer ?? null,
    authorizationEndpoint: info.authorizationServerMetadata?.authorization_endpoint ?? null,
  });

  const host = new RegisteredHost();
  const selected = await selectResourceURL(serverUrl, host, info.resourceMetadata);
  emit({ step: "resource", selected: selected?.href ?? null });

  const result = await auth(host, { serverUrl, resourceMetadataUrl });
  emit({ step: "auth", result, authorizationUrl: host.redirected?.href ?? null });
} catch (error) {
  emit({ step: "failed", exception: { name: error?.name ?? typeof error, message: String(error?.message ?? error) } });
  process.exit(1);
}
