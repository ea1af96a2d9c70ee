// The app side of MCP Apps (io.modelcontextprotocol/ui), shared by truloop's apps: JSON-RPC 2.0 over postMessage
// with the host (ui/initialize, the tool's input and result, tools/call through the host, size changes), the
// host's theme and locale, and times in the caller's time zone. No network: everything comes from the host.
const TL = (() => {
  const PROTOCOL = "2026-01-26";
  const pending = new Map();
  const handlers = {};
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
    if (m.method === "ui/notifications/host-context-changed") applyContext(m.params || {});
    const handler = handlers[m.method];
    if (handler) Promise.resolve(handler(m.params || {})).catch((e) => console.error(e));
    if (m.id !== undefined && m.method) post({ id: m.id, result: {} }); // e.g. ui/resource-teardown, ping
  });

  function applyContext(context) {
    host = { ...host, ...context };
    const root = document.documentElement;
    if (host.theme === "dark" || host.theme === "light") root.dataset.theme = host.theme;
    root.lang = lang();
    if (handlers.context) handlers.context(host);
  }

  function lang() {
    const locale = host.locale || fallbackLocale || (fallbackZone === "Asia/Seoul" ? "ko-KR" : navigator.language) || "en";
    return String(locale).toLowerCase().startsWith("ko") ? "ko" : "en";
  }
  function locale() { return lang() === "ko" ? "ko-KR" : (host.locale && !String(host.locale).startsWith("ko") ? host.locale : "en-US"); }
  function t(key, values) {
    const text = (texts[lang()] && texts[lang()][key]) || texts.en[key] || key;
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

  // The size the host should give the iframe, told whenever it changes.
  function watchSize() {
    let last = "";
    const tell = () => {
      const size = { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) };
      const key = size.width + "x" + size.height;
      if (key !== last) { last = key; notify("ui/notifications/size-changed", size); }
    };
    new ResizeObserver(tell).observe(document.body);
    tell();
  }

  async function start(options) {
    texts = options.texts || texts;
    Object.assign(handlers, options.on || {});
    try {
      const answer = await request("ui/initialize", {
        appInfo: { name: "truloop-" + options.name, version: "1.0.0" },
        appCapabilities: {},
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
    start, t, lang, locale, zone, when, day, range, el, textOf, request, notify,
    callTool: (name, args) => request("tools/call", { name, arguments: args }),
    // the caller's own zone and language, from the result: the language when the host says none
    setCaller: (result) => { fallbackZone = zone(result); fallbackLocale = (result && result.your_locale) || null; },
    host: () => host,
  };
})();
