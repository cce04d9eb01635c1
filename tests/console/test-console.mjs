#!/usr/bin/env node
// batonctl console in a real browser (Debian's chromium, driven by
// playwright-core), against a live 3-node TLS cluster of scripts/cluster,
// printing TAP:
// - the page loads: the three members with one leader, the operator's
//   role, no error in the browser's console;
// - a grant made by `batonctl lock` appears in the locks table within a
//   second of the lock being held, and in the event stream;
// - Revoke on that row, confirmed in the dialog, ends the `batonctl lock`
//   holder with exit 121;
// - a console run with a `read`-role certificate shows no admin button
//   (the same query finds them on the admin's page: the control);
// - the console refuses a request without this run's cookie, one for
//   another Host, and a --listen address off loopback.
// Screenshots go to console-artifacts/ in the working directory (the
// build directory under make check). BATONCTL and BATON_BUILD_DIR name
// the build (default: the working directory's); the cluster's ports are
// BATON_CONSOLE_TEST_BASE_PORT+1.. (default 30000).
import { spawn, execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const build = process.env.BATON_BUILD_DIR || process.cwd();
const batonctl = process.env.BATONCTL || path.join(build, "batonctl");
const browserPath = process.env.BATON_CHROMIUM || "/usr/bin/chromium";
const artifacts = path.resolve(process.cwd(), "console-artifacts");

let n = 0;
let failed = 0;
function check(what, ok, detail) {
  n++;
  if (ok) {
    console.log(`ok ${n} - ${what}`);
  } else {
    failed++;
    console.log(`not ok ${n} - ${what}`);
    for (const line of String(detail ?? "").split("\n").slice(0, 20)) {
      console.log(`#   ${line}`);
    }
  }
  return ok;
}
function note(text) {
  for (const line of String(text).split("\n")) console.log(`# ${line}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A 3-node TLS cluster in a directory of its own, with certificates for
// `admin` (admin) and `reader` (read).
function clusterUp(tmp) {
  const state = path.join(tmp, "cluster");
  // Ports of its own (make check runs tests two at a time).
  const base = Number(process.env.BATON_CONSOLE_TEST_BASE_PORT || 30000);
  const env = {
    ...process.env,
    BATON_BUILD_DIR: build,
    BATON_CLUSTER_DIR: state,
    BATON_BASE_PORT: String(base),
    BATON_NODE_CONFIG: "role = reader read",
  };
  fs.mkdirSync(state, { recursive: true });
  execFileSync(path.join(root, "scripts", "certs"),
               [path.join(state, "tls"), "--nodes", "3", "--client", "reader"],
               { stdio: "ignore" });
  execFileSync(path.join(root, "scripts", "cluster"), ["up"],
               { env, stdio: "ignore", timeout: 300000 });
  const tls = path.join(state, "tls");
  const client = (who) => ({
    ...process.env,
    BATON_ENDPOINTS: [1, 2, 3].map((i) => `127.0.0.1:${base + 100 + i}`).join(","),
    BATON_CACERT: path.join(tls, "ca.crt"),
    BATON_CERT: path.join(tls, `${who}.crt`),
    BATON_KEY: path.join(tls, `${who}.key`),
  });
  return {
    env,
    admin: client("admin"),
    reader: client("reader"),
    down: () => spawnSync(path.join(root, "scripts", "cluster"),
                          ["down", "--purge"], { env, stdio: "ignore" }),
  };
}

// `batonctl console` with `env`'s certificate; resolves with its address
// once it prints it.
function startConsole(env) {
  const p = spawn(batonctl, ["console", "--listen", "127.0.0.1:0"],
                  { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no address: " + out)), 10000);
    const take = (d) => {
      out += d;
      const m = out.match(/^console: (http:\/\/\S+)$/m);
      if (m) {
        clearTimeout(timer);
        resolve({ proc: p, url: m[1], origin: new URL(m[1]).origin });
      }
    };
    p.stdout.on("data", take);
    p.stderr.on("data", take);
    p.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

// `batonctl lock NAME -- sh -c 'echo held; sleep 300'`: resolves with the
// process once its command runs (the lock is held), and the time then.
function holdLock(env, name, how = ["lock", name]) {
  const p = spawn(batonctl, [...how, "--ttl", "3000", "--", "sh", "-c",
                             "echo held; exec sleep 300"],
                  { env, stdio: ["ignore", "pipe", "pipe"] });
  p.exited = new Promise((r) => p.on("exit", (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("lock not held")), 15000);
    p.stdout.on("data", (d) => {
      if (String(d).includes("held")) {
        clearTimeout(timer);
        resolve({ proc: p, heldAt: Date.now() });
      }
    });
  });
}

async function openPage(browser, con, name, errors) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on("console", (m) => { if (m.type() === "error") errors.push(`${name}: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`${name}: ${e.message}`));
  await page.goto(con.url);
  await page.waitForSelector("#members tbody tr", { timeout: 10000 });
  return page;
}

// What else the page shows: an election with its leader's value, a
// reader of a shared lock and a semaphore's permits.
async function others(cl) {
  return Promise.all([
    holdLock(cl.admin, "console/leader",
             ["elect", "console/leader", "--value", "10.0.0.7:8080"]),
    holdLock(cl.admin, "console/config", ["lock", "console/config", "--shared"]),
    holdLock(cl.admin, "console/pool",
             ["sem", "console/pool", "--permits", "3", "--take", "2"]),
  ]);
}

async function adminChecks(browser, cl, con, errors) {
  const held = await others(cl);
  const page = await openPage(browser, con, "admin", errors);
  const members = await page.$$eval("#members tbody tr", (rows) =>
    rows.map((r) => r.children[2].textContent));
  check("the page shows the 3 members, one of them leader",
        members.length === 3 && members.filter((r) => r === "leader").length === 1,
        JSON.stringify(members));
  check("the page shows the admin role",
        (await page.textContent("#role")) === "admin");

  const elections = await page.waitForSelector(
    '#elections td:text-is("10.0.0.7:8080")', { timeout: 5000 }).then(() => true, () => false);
  check("the elections table shows the leader's value", elections,
        await page.textContent("#elections"));
  const kinds = await page.textContent("#locks");
  check("the locks table shows a shared lock and a semaphore's permits",
        /shared/.test(kinds) && /semaphore \(2 of 3\)/.test(kinds), kinds);
  const sessions = await page.$$eval("#sessions tbody tr", (rows) => rows.length);
  check("the sessions table lists the holders' sessions", sessions >= 3, `${sessions} rows`);

  const demo = await holdLock(cl.admin, "console/demo");
  let seenMs = -1;
  try {
    await page.waitForSelector('#locks td.name:text-is("console/demo")', { timeout: 1000 });
    seenMs = Date.now() - demo.heldAt;
  } catch (e) {
    note(`not seen within 1 s: ${e.message.split("\n")[0]}`);
  }
  note(`the grant appeared ${seenMs} ms after batonctl lock held it`);
  check("a grant made by batonctl lock appears within a second", seenMs >= 0 && seenMs <= 1000,
        `after ${seenMs} ms`);
  const events = await page.textContent("#events");
  check("the event stream lists the grant", /granted console\/demo/.test(events), events);
  await page.waitForSelector("#sessions tbody tr", { timeout: 5000 }).catch(() => {});
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, "console-admin.png"), fullPage: true });

  const buttons = await page.$$("main button");
  check("the admin's page has admin buttons (the read-role check's control)",
        buttons.length > 0, `${buttons.length} buttons`);
  const row = page.locator("#locks tbody tr", { hasText: "console/demo" });
  await row.locator("button", { hasText: "Revoke" }).click();
  await page.waitForSelector("#confirm[open]", { timeout: 2000 });
  const question = await page.textContent("#confirm-text");
  check("Revoke asks for a confirmation first", /Revoke console\/demo/.test(question), question);
  await page.screenshot({ path: path.join(artifacts, "console-confirm.png") });
  await page.click("#confirm-ok");
  const code = await Promise.race([demo.proc.exited, sleep(15000).then(() => "still running")]);
  check("the revoke from the page ends batonctl lock with exit 121", code === 121, `exit ${code}`);
  if (code === "still running") demo.proc.kill("SIGKILL");
  await page.waitForFunction(() => !/console\/demo/.test(
    document.querySelector("#locks tbody").textContent), null, { timeout: 5000 })
    .then(() => check("the revoked lock leaves the table", true),
          () => check("the revoked lock leaves the table", false));
  for (const h of held) {
    h.proc.kill("SIGTERM");
    await h.proc.exited;
  }
  await page.close();
}

async function readerChecks(browser, cl, con, errors) {
  const held = await holdLock(cl.admin, "console/read-view");
  const page = await openPage(browser, con, "reader", errors);
  await page.waitForSelector('#locks td.name:text-is("console/read-view")', { timeout: 5000 });
  check("the read role's page shows the locks", true);
  check("the read role's page says view only",
        (await page.textContent("#role")) === "view only");
  const buttons = await page.$$("main button");
  const visibleAdmin = await page.$$eval(".admin", (els) =>
    els.filter((e) => e.offsetParent !== null).length);
  check("the read role sees no admin buttons", buttons.length === 0 && visibleAdmin === 0,
        `${buttons.length} buttons, ${visibleAdmin} admin cells shown`);
  await page.screenshot({ path: path.join(artifacts, "console-read.png"), fullPage: true });
  held.proc.kill("SIGTERM");
  await held.proc.exited;
  await page.close();
}

async function refusals(cl, con) {
  let r = await fetch(`${con.origin}/api/locks`);
  check("no cookie: 401", r.status === 401, `HTTP ${r.status}`);
  r = await fetch(`${con.origin}/?token=0123`);
  check("a wrong token: 401", r.status === 401, `HTTP ${r.status}`);
  const ok = await fetch(con.url, { redirect: "manual" });
  const cookie = (ok.headers.get("set-cookie") || "").split(";")[0];
  check("the printed address sets an HttpOnly, SameSite=Strict cookie",
        ok.status === 303 && /HttpOnly/.test(ok.headers.get("set-cookie"))
          && /SameSite=Strict/.test(ok.headers.get("set-cookie")),
        `${ok.status} ${ok.headers.get("set-cookie")}`);
  r = await fetch(`${con.origin}/api/whoami`, { headers: { cookie } });
  check("with the cookie: 200", r.status === 200, `HTTP ${r.status}`);
  r = await fetch(`${con.origin}/api/revoke?name=x&session=1&token=1`,
                  { method: "POST", headers: { cookie } });
  check("a POST without X-Baton-Console (a form elsewhere): 403", r.status === 403,
        `HTTP ${r.status}`);
  const other = spawnSync("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}",
                                   "-H", "Host: rebound.example.net",
                                   "-H", `Cookie: ${cookie}`, `${con.origin}/api/whoami`]);
  check("another Host (a DNS name rebound to loopback): 403",
        String(other.stdout) === "403", String(other.stdout));
  const off = spawnSync(batonctl, ["console", "--listen", "0.0.0.0:0"],
                        { env: cl.admin, timeout: 10000 });
  check("--listen off loopback: exit 2, naming the problem",
        off.status === 2 && /not a loopback address/.test(String(off.stderr)),
        `exit ${off.status}: ${off.stderr}`);
}

async function main() {
  let chromium;
  try {
    ({ chromium } = await import("playwright-core"));
  } catch (e) {
    check("playwright-core is installed (scripts/setup runs npm ci in tests/console)",
          false, e.message);
    console.log(`1..${n}`);
    return 1;
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "baton-console-test."));
  const consoles = [];
  let cl, browser;
  try {
    cl = clusterUp(tmp);
    const admin = await startConsole(cl.admin);
    consoles.push(admin.proc);
    const reader = await startConsole(cl.reader);
    consoles.push(reader.proc);
    browser = await chromium.launch({ executablePath: browserPath,
                                      args: ["--no-sandbox", "--disable-gpu"] });
    const errors = [];
    await adminChecks(browser, cl, admin, errors);
    await readerChecks(browser, cl, reader, errors);
    check("no error in the browser's console", errors.length === 0, errors.join("\n"));
    await refusals(cl, admin);
  } catch (e) {
    check("the test ran to its end", false, e.stack);
  } finally {
    if (browser) await browser.close();
    for (const p of consoles) p.kill("SIGTERM");
    if (cl) cl.down();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`1..${n}`);
  return failed === 0 ? 0 : 1;
}

process.exit(await main());
