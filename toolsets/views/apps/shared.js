// The app side of MCP Apps (io.modelcontextprotocol/ui), shared by truloop's apps: JSON-RPC 2.0 over postMessage
// with the host (ui/initialize, the tool's input and result or its cancellation, tools/call through the host, size
// changes, display modes), the host's theme and locale, and times in the caller's time zone. No network: everything
// comes from the host.
const TL = (() => {
  const PROTOCOL = "2026-01-26";
  const MODES = ["inline", "fullscreen"]; // the display modes every app can be shown in
  const METHOD_NOT_FOUND = -32601;
  const SHARED_TEXTS = {
    en: { toolCancelled: "The call was cancelled.", fullscreen: "Show larger", inline: "Back to the chat" },
    ko: { toolCancelled: "호출이 취소되었습니다.", fullscreen: "크게 보기", inline: "대화로 돌아가기" },
  };
  const pending = new Map();
  const handlers = {};
  // host requests an app answers: each returns the result (an app adds its own with `on`); any other is -32601
  const requests = { ping: () => ({}), "ui/resource-teardown": () => ({}) };
  let nextId = 1;
  let host = {};
  let texts = { en: {}, ko: {} };
  let fallbackZone = null;
  let fallbackLocale = null;

  function post(message) { window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*"); }
  function notify(method, params) { post({ method, params: params || {} }); }
  function request(method, params) {
    const id = nextId++;
    post({ id, method, params: params || {} });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && !m.method) {
      const waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error) waiting.reject(Object.assign(new Error(m.error.message || "error"), { code: m.error.code }));
      else waiting.resolve(m.result);
      return;
    }
    if (m.id !== undefined && m.method) { answerRequest(m); return; }
    if (m.method === "ui/notifications/host-context-changed") applyContext(m.params || {});
    const handler = handlers[m.method];
    if (handler) Promise.resolve(handler(m.params || {})).catch((e) => console.error(e));
  });

  // A host request: its handler's result, or JSON-RPC's "method not found" for a method this app does not know.
  async function answerRequest(m) {
    const handler = requests[m.method];
    if (!handler) {
      post({ id: m.id, error: { code: METHOD_NOT_FOUND, message: "Method not found: " + m.method } });
      return;
    }
    try { post({ id: m.id, result: (await handler(m.params || {})) || {} }); }
    catch (e) { post({ id: m.id, error: { code: -32603, message: String((e && e.message) || e) } }); }
  }

  function applyContext(context) {
    host = { ...host, ...context };
    const root = document.documentElement;
    if (host.theme === "dark" || host.theme === "light") root.dataset.theme = host.theme;
    root.lang = lang();
    fit();
    if (handlers.context) handlers.context(host);
  }

  function lang() {
    const locale = host.locale || fallbackLocale || (fallbackZone === "Asia/Seoul" ? "ko-KR" : navigator.language) || "en";
    return String(locale).toLowerCase().startsWith("ko") ? "ko" : "en";
  }
  function locale() { return lang() === "ko" ? "ko-KR" : (host.locale && !String(host.locale).startsWith("ko") ? host.locale : "en-US"); }
  function t(key, values) {
    const text = (texts[lang()] && texts[lang()][key]) || SHARED_TEXTS[lang()][key] || texts.en[key] || SHARED_TEXTS.en[key] || key;
    return text.replace(/\{(\w+)\}/g, (_, name) => (values && name in values ? values[name] : ""));
  }

  // The caller's zone wins over the host's: the result says which it is (your_timezone).
  function zone(result) { return (result && result.your_timezone) || fallbackZone || "UTC"; }
  function when(iso, tz, options) {
    return new Intl.DateTimeFormat(locale(), { timeZone: tz, ...options }).format(new Date(iso));
  }
  function day(isoDate, options) {
    return new Intl.DateTimeFormat(locale(), { timeZone: "UTC", ...options }).format(new Date(isoDate + "T00:00:00Z"));
  }
  function range(start, end, tz) {
    const sameDay = when(start, tz, { dateStyle: "medium" }) === when(end, tz, { dateStyle: "medium" });
    const from = when(start, tz, { dateStyle: "medium", timeStyle: "short" });
    const to = when(end, tz, sameDay ? { timeStyle: "short" } : { dateStyle: "medium", timeStyle: "short" });
    return `${from} – ${to}`;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function textOf(result) {
    return ((result && result.content) || []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
  }

  // The display mode and the container the host gives (hostContext.displayMode, containerDimensions): a fixed
  // height is the document's height, its content scrolling inside; a maximum caps it; a width is kept to.
  function displayMode() { return MODES.includes(host.displayMode) ? host.displayMode : "inline"; }
  function container() { return host.containerDimensions || {}; }
  function px(value) { return typeof value === "number" && value > 0 ? value + "px" : ""; }
  function fit() {
    const root = document.documentElement, body = document.body, box = container();
    root.dataset.displayMode = displayMode();
    if (!body) return;
    root.style.height = px(box.height);
    root.style.width = px(box.width);
    body.style.height = box.height ? "100%" : "";
    body.style.maxHeight = px(box.maxHeight);
    body.style.maxWidth = px(box.maxWidth);
    body.style.overflowY = box.height || box.maxHeight ? "auto" : "";
    tellSize();
  }
  // May the app ask for `mode`? The host lists the modes it offers (hostContext.availableDisplayModes).
  function offers(mode) { return MODES.includes(mode) && (host.availableDisplayModes || []).includes(mode); }
  async function requestDisplayMode(mode) {
    const answer = await request("ui/request-display-mode", { mode });
    const actual = (answer && answer.mode) || displayMode();
    applyContext({ displayMode: actual });
    return actual;
  }

  // The size the content wants, told whenever it changes, measured as the official App SDK does: the document at
  // `height: max-content` (its content's height, whatever height the frame has now, so it can shrink as well as
  // grow), the width the frame gives. A fixed container height is the size.
  let lastSize = "", sizeQueued = false, watching = false;
  function tellSize() {
    if (!watching || sizeQueued) return;
    sizeQueued = true;
    requestAnimationFrame(() => {
      sizeQueued = false;
      const root = document.documentElement, box = container();
      let height = box.height;
      if (!height) {
        const kept = root.style.height;
        root.style.height = "max-content";
        height = Math.ceil(root.getBoundingClientRect().height);
        root.style.height = kept;
      }
      const size = { width: Math.ceil(window.innerWidth), height };
      const key = size.width + "x" + size.height;
      if (key !== lastSize) { lastSize = key; notify("ui/notifications/size-changed", size); }
    });
  }
  function watchSize() {
    watching = true;
    const observer = new ResizeObserver(tellSize);
    observer.observe(document.documentElement);
    observer.observe(document.body);
    tellSize();
  }

  async function start(options) {
    texts = options.texts || texts;
    Object.assign(handlers, options.on || {});
    Object.assign(requests, options.requests || {});
    try {
      const answer = await request("ui/initialize", {
        appInfo: { name: "truloop-" + options.name, version: "1.0.0" },
        appCapabilities: { availableDisplayModes: MODES },
        protocolVersion: PROTOCOL,
      });
      applyContext((answer && answer.hostContext) || {});
    } catch (e) {
      applyContext({});
    }
    notify("ui/notifications/initialized", {});
    watchSize();
  }

  return {
    start, t, lang, locale, zone, when, day, range, el, textOf, request, notify, displayMode, offers, requestDisplayMode,
    callTool: (name, args) => request("tools/call", { name, arguments: args }),
    // the caller's own zone and language, from the result: the language when the host says none
    setCaller: (result) => { fallbackZone = zone(result); fallbackLocale = (result && result.your_locale) || null; },
    host: () => host,
  };
})();
