// batonctl console's page: reads /api/* of the batonctl that served it
// (which asks the cluster with the operator's certificate), refreshes
// every second and at every event of the live stream, and offers the
// admin actions, each after a confirmation, to an admin only.
"use strict";

const REFRESH_MS = 1000;
const MAX_EVENTS = 200;

let admin = false;
let sessionsById = new Map();
let refreshing = false;
let refreshAgain = false;

function $(id) {
  return document.getElementById(id);
}

// A table cell holding `text` (never parsed as HTML: names come from
// clients).
function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text === undefined || text === null ? "" : String(text);
  if (cls) td.className = cls;
  return td;
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) tr.appendChild(c);
  return tr;
}

function fill(tableId, rows) {
  const body = $(tableId).querySelector("tbody");
  body.replaceChildren(...rows);
}

function ago(unixSeconds) {
  if (!unixSeconds) return "";
  const s = Math.max(0, Math.round(Date.now() / 1000 - unixSeconds));
  if (s < 120) return s + " s ago";
  if (s < 7200) return Math.round(s / 60) + " min ago";
  return Math.round(s / 3600) + " h ago";
}

function duration(ms) {
  if (ms === undefined || ms === null) return "";
  if (ms < 10000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 120000) return Math.round(ms / 1000) + " s";
  return Math.round(ms / 60000) + " min";
}

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.classList.add("shown");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("shown"), 4000);
}

async function get(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  const body = await r.json().catch(() => null);
  if (!r.ok) {
    throw new Error(body && body.error ? body.error + ": " + body.message
                                       : path + ": HTTP " + r.status);
  }
  return body;
}

// An admin action, once the operator confirms it in the dialog.
function act(question, path) {
  $("confirm-text").textContent = question;
  const dialog = $("confirm");
  dialog.returnValue = "";
  dialog.onclose = async () => {
    if (dialog.returnValue !== "ok") return;
    const r = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-Baton-Console": "1" },
    });
    const body = await r.json().catch(() => null);
    toast(r.ok ? body.done : (body ? body.error + ": " + body.message
                                   : "HTTP " + r.status));
    refresh();
  };
  dialog.showModal();
}

function actionCell(label, question, path) {
  const td = document.createElement("td");
  if (!admin) return td;
  td.className = "admin";
  const b = document.createElement("button");
  b.className = "danger";
  b.textContent = label;
  b.addEventListener("click", () => act(question, path));
  td.appendChild(b);
  return td;
}

function q(params) {
  return new URLSearchParams(params).toString();
}

function showMembers(m) {
  fill("members", m.members.map((x) => {
    const leader = x.role === "leader";
    return row([
      cell(x.id, "num"), cell(x.address), cell(x.role, leader ? "role-leader" : ""),
      cell(x.term, "num"), cell(x.commit, "num"), cell(x.applied, "num"),
      cell(x.lag, "num"),
      cell(x.state + (x.error ? " (" + x.error + ")" : ""),
           "state-" + x.state.replace(" ", "-")),
      cell(x.release),
      leader || !x.voter || x.state === "unreachable"
        ? cell("")
        : actionCell("Make leader", "Transfer leadership to node " + x.id + "?",
                     "/api/transfer?" + q({ to: x.id })),
    ]);
  }));
}

function timeLeft(session) {
  const s = sessionsById.get(session);
  return s && s.time_left_ms !== undefined ? duration(s.time_left_ms) : "";
}

function showLocks(l) {
  const locks = [], elections = [];
  for (const lock of l.locks) {
    if (lock.kind === "election") {
      const h = lock.holders[0];
      elections.push(row([
        cell(lock.name, "name"), cell(h.session, "num"), cell(h.client_name),
        cell(h.token, "num"), cell(ago(h.since)), cell(lock.value || ""),
        cell(lock.waiters, "num"),
        actionCell("Revoke", "Take the leadership of " + lock.name +
                   " from session " + h.session + "?",
                   "/api/revoke?" + q({ name: lock.name, session: h.session,
                                        token: h.token })),
      ]));
      continue;
    }
    lock.holders.forEach((h, i) => {
      const kind = lock.kind === "semaphore"
        ? "semaphore (" + h.permits + " of " + h.limit + ")" : lock.kind;
      locks.push(row([
        cell(i === 0 ? lock.name : "", "name"), cell(i === 0 ? kind : ""),
        cell(h.session, "num"), cell(h.client_name), cell(h.token, "num"),
        cell(ago(h.since)), cell(timeLeft(h.session)),
        cell(i === 0 ? lock.waiters : "", "num"),
        actionCell("Revoke", "Revoke " + lock.name + " from session " +
                   h.session + " (token " + h.token + ")? Its holder is told " +
                   "at its next keepalive.",
                   "/api/revoke?" + q({ name: lock.name, session: h.session,
                                        token: h.token })),
      ]));
    });
  }
  fill("locks", locks);
  fill("elections", elections);
  $("locks-count").textContent =
    "(" + l.locks.length + (l.more ? "+, the oldest shown" : "") + ")";
}

function showSessions(s) {
  sessionsById = new Map(s.sessions.map((x) => [x.id, x]));
  fill("sessions", s.sessions.map((x) => row([
    cell(x.id, "num"), cell(x.client_name), cell(x.identity), cell(x.address),
    cell(duration(x.ttl_ms)), cell(duration(x.time_left_ms)),
    cell(x.lock_delay_ms ? duration(x.lock_delay_ms) : "none"),
    cell((x.locks || []).map((k) => k.name + " @" + k.token).join(", ")),
    cell(x.waiting, "num"), cell(duration(x.since_keepalive_ms)),
    actionCell("Close", "Close session " + x.id + " (" + x.client_name +
               ")? Its locks are released as if it expired.",
               "/api/close?" + q({ session: x.id })),
  ])));
  $("sessions-count").textContent = "(" + s.sessions.length +
    (s.more ? "+" : "") + ")";
}

async function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  try {
    const [m, s, l] = await Promise.allSettled([
      get("/api/members"), get("/api/sessions"), get("/api/locks")]);
    if (m.status === "fulfilled") showMembers(m.value);
    if (s.status === "fulfilled") {
      showSessions(s.value);
      $("sessions-note").textContent = "";
    } else {
      $("sessions-note").textContent = s.reason.message;
    }
    if (l.status === "fulfilled") showLocks(l.value);
    const failed = [m, s, l].find((x) => x.status === "rejected");
    const live = $("live");
    live.textContent = failed ? failed.reason.message : "live";
    live.className = "badge " + (failed ? "down" : "live");
  } finally {
    refreshing = false;
    if (refreshAgain) {
      refreshAgain = false;
      refresh();
    }
  }
}

function showEvent(e, cls) {
  const li = document.createElement("li");
  li.className = cls;
  li.textContent = e;
  const list = $("events");
  list.insertBefore(li, list.firstChild);
  while (list.children.length > MAX_EVENTS) list.removeChild(list.lastChild);
}

// The live stream: each change is listed and the tables read again. When
// the stream ends (the cluster compacted past it, or refused it), it is
// opened again from now after the tables are read.
function listen() {
  const es = new EventSource("/api/events");
  es.onmessage = (m) => {
    const e = JSON.parse(m.data);
    showEvent("#" + e.index + ":" + e.ord + " " + e.kind + " " + e.name +
              " session " + e.session + " token " + e.token +
              " (" + e.cause + ")" + (e.value ? " = " + e.value : ""), e.kind);
    refresh();
  };
  es.addEventListener("end", (m) => {
    const e = JSON.parse(m.data);
    showEvent("stream ended: " + e.error + ": " + e.message, "end");
    es.close();
    refresh();
    setTimeout(listen, 1000);
  });
}

async function start() {
  try {
    const me = await get("/api/whoami");
    admin = me.admin;
    $("endpoints").textContent = me.endpoints;
    $("role").textContent = admin ? "admin" : "view only";
    document.body.classList.toggle("is-admin", admin);
  } catch (err) {
    $("role").textContent = err.message;
  }
  await refresh();
  listen();
  setInterval(refresh, REFRESH_MS);
}

document.addEventListener("DOMContentLoaded", start);
