// The host side of MCP Apps, as the official SDK builds it: @modelcontextprotocol/ext-apps's AppBridge, talking to
// the app through a sandbox proxy on a second origin (sandbox.html, served with the spec's default CSP), the way
// the package's examples/basic-host does. Bundled by esbuild into host.bundle.js for tests/e2e/test_apps_browser.py.
// The app's tools/call goes to the real server through window.forwardToolCall (the test's MCP client).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const HOST = { name: "truloop-test-host", version: "1.0.0" };
const PROXY_READY = "ui/notifications/sandbox-proxy-ready";
const ANY_RESULT = { "~standard": { version: 1, vendor: "truloop-test-host", validate: (value) => ({ value }) } };

// What the app told the host, for the test to read.
window.seen = { sizes: [], calls: [], modes: [], errors: [] };
let bridge = null;
let frame = null;
let context = {};

function box() { return document.getElementById("box"); }

// The frame follows the app's reported height, unless the host fixed the container (full screen).
function follow({ height }) {
  window.seen.sizes.push({ height });
  const fixed = context.containerDimensions && context.containerDimensions.height;
  if (height !== undefined && !fixed) frame.style.height = height + "px";
}

window.openApp = async ({ html, input, result, hostContext, sandboxUrl, width }) => {
  context = { ...hostContext };
  box().style.width = width + "px";
  frame = document.createElement("iframe");
  frame.title = "app";
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  box().replaceChildren(frame);
  const ready = new Promise((resolve) => {
    const listener = (event) => {
      if (event.source === frame.contentWindow && event.data && event.data.method === PROXY_READY) {
        window.removeEventListener("message", listener);
        resolve();
      }
    };
    window.addEventListener("message", listener);
  });
  frame.src = sandboxUrl;
  await ready;

  bridge = new AppBridge(null, HOST, { serverTools: {}, openLinks: {} }, { hostContext: context });
  bridge.onsizechange = follow;
  bridge.oncalltool = async (params) => {
    window.seen.calls.push(params);
    return await window.forwardToolCall(params);
  };
  bridge.onrequestdisplaymode = async ({ mode }) => {
    window.seen.modes.push(mode);
    const offered = context.availableDisplayModes || ["inline"];
    const actual = offered.includes(mode) ? mode : context.displayMode || "inline";
    window.setDisplayMode(actual);
    return { mode: actual };
  };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  await bridge.sendSandboxResourceReady({ html });
  await initialized;
  if (input) await bridge.sendToolInput({ arguments: input });
  if (result) await bridge.sendToolResult(result);
};

// Full screen: the frame fills the host's page (a fixed container the app must fit); inline: the chat's width.
window.setDisplayMode = (mode) => {
  if (mode === "fullscreen") {
    const size = { width: window.innerWidth, height: window.innerHeight };
    frame.style.width = size.width + "px";
    frame.style.height = size.height + "px";
    box().style.width = size.width + "px";
    window.setHostContext({ displayMode: "fullscreen", containerDimensions: size });
  } else {
    frame.style.width = "";
    window.setHostContext({ displayMode: "inline", containerDimensions: { maxHeight: 6000 } });
  }
};

window.setHostContext = (changes) => {
  context = { ...context, ...changes };
  bridge.setHostContext(context);
  if (changes.containerDimensions && changes.containerDimensions.height) {
    frame.style.height = changes.containerDimensions.height + "px";
  }
};
window.setWidth = (px) => { box().style.width = px + "px"; };
window.sendToolResult = (result) => bridge.sendToolResult(result);
window.sendToolCancelled = (reason) => bridge.sendToolCancelled(reason ? { reason } : {});
window.appCapabilities = () => bridge.getAppCapabilities();
window.appVersion = () => bridge.getAppVersion();
// A request of the host's that no app knows: the app's JSON-RPC error, as the bridge hands it back.
window.askUnknown = async (method) => {
  try {
    return { result: await bridge.request({ method, params: {} }, ANY_RESULT) };
  } catch (error) {
    return { error: { code: error.code, message: error.message } };
  }
};
