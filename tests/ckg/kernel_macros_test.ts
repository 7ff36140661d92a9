/**
 * C as the Linux kernel writes it: attribute macros tree-sitter cannot know (`asmlinkage`,
 * `__sched`, `__init`, `__user`, `__releases(lock)`) and struct members under `#ifdef`. Indexed
 * in this thread and on parser workers, which must find the same.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { CodeGraph } from "../../src/ckg/graph.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

const CORE = `/* kernel/sched/core.c, shortened */
asmlinkage __visible void __sched schedule(void)
{
	struct task_struct *tsk = current;

	sched_submit_work(tsk);
	__schedule(SM_NONE);
}

static int __init setup_relax_domain_level(char __user *str)
{
	return kstrtoint(str, 0, &default_relax_domain_level);
}

static void rq_unlock_all(struct rq *rq) __releases(rq->lock)
{
	raw_spin_unlock(&rq->lock);
}

static noinline int __cpuidle cpu_idle_poll(void)
{
	return 1;
}

struct rq {
	unsigned int nr_running;
#ifdef CONFIG_SMP
	struct root_domain *rd;
#endif
	struct ieee80211_hdr i3e __packed __aligned(2);
};
`;

for (const workers of [0, 2]) {
  Deno.test(`kernel C: attribute macros hide no function, #ifdef hides no member (workers: ${workers})`, async () => {
    await using ws = await tempDir();
    await using cache = await tempDir("deft-ckg-cache-");
    // Two files: parser workers start only for more than one.
    await writeTree(ws.path, { "core.c": CORE, "idle.c": "void cpu_idle(void) {}\n" });
    const graph = CodeGraph.open(ws.path, {
      ckgDir: cache.path,
      workers,
      workerThresholdBytes: 1,
    });
    try {
      const report = await graph.refresh();
      assert.match(report.parser, workers === 0 ? /in-process/ : /parser worker/);
      const found = async (command: "search_function", name: string) =>
        (await graph.lookup(command, name)).matches.map((m) =>
          `${m.symbol.kind} ${m.symbol.name} ${m.symbol.startLine}-${m.symbol.endLine}: ${m.symbol.signature}`
        );
      assert.deepEqual(await found("search_function", "schedule"), [
        // The signature is the file's own text, macros and all.
        "function schedule 2-8: asmlinkage __visible void __sched schedule(void)",
      ]);
      assert.deepEqual(await found("search_function", "setup_relax_domain_level"), [
        "function setup_relax_domain_level 10-13: static int __init setup_relax_domain_level(char __user *str)",
      ]);
      assert.deepEqual(await found("search_function", "rq_unlock_all"), [
        "function rq_unlock_all 15-18: static void rq_unlock_all(struct rq *rq) __releases(rq->lock)",
      ]);
      assert.deepEqual(await found("search_function", "cpu_idle_poll"), [
        "function cpu_idle_poll 20-23: static noinline int __cpuidle cpu_idle_poll(void)",
      ]);
      // No definition takes a macro's or a type's name.
      for (const name of ["void", "__sched", "__init", "__releases", "__cpuidle"]) {
        assert.deepEqual(await found("search_function", name), [], name);
      }
      const db = new DatabaseSync(graph.databasePath, { readOnly: true });
      try {
        const fields = db.prepare(
          "SELECT name FROM symbols WHERE kind = 'field' AND class_name = 'rq' ORDER BY name",
        ).all().map((row) => row.name);
        assert.deepEqual(fields, ["i3e", "nr_running", "rd"]);
      } finally {
        db.close();
      }
    } finally {
      graph.close();
    }
  });
}

const SPLIT_HEADERS = `static bool
rpcrdma_is_bcall(struct rpcrdma_xprt *r_xprt, struct rpcrdma_rep *rep)
#if defined(CONFIG_SUNRPC_BACKCHANNEL)
{
	return r_xprt != NULL;
}
#else
{
	return false;
}
#endif

#ifdef CONFIG_DLM_DEPRECATED_API
static int set_lock_args(int mode, unsigned long timeout_cs)
#else
static int set_lock_args(int mode)
#endif
{
	return mode;
}

int after_them(void) { return 1; }
`;

Deno.test("kernel C: a function whose header or body #ifdef splits is found", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(ws.path, { "rpc.c": SPLIT_HEADERS });
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  try {
    await graph.refresh();
    const lines = async (name: string) =>
      (await graph.lookup("search_function", name)).matches.map((m) =>
        `${m.symbol.startLine}-${m.symbol.endLine}`
      );
    assert.deepEqual(await lines("rpcrdma_is_bcall"), ["1-6"]);
    assert.deepEqual(await lines("set_lock_args"), ["14-20"]);
    assert.deepEqual(await lines("after_them"), ["22-22"]);
  } finally {
    graph.close();
  }
});

/** drivers/net/ethernet/3com/typhoon.c: members aligned by a macro the file defines itself. */
const SELF_MACRO = `#define __3xp_aligned	____cacheline_aligned
struct typhoon_shared {
	struct typhoon_interface	iface;
	struct typhoon_indexes		indexes			__3xp_aligned;
	struct tx_desc			txLo[TXLO_ENTRIES] 	__3xp_aligned;
	u32				zeroWord;
} __packed;

struct rxbuff_ent {
	struct sk_buff *skb;
};
`;

Deno.test("kernel C: a struct whose members carry a file's own macro is still found", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(ws.path, { "typhoon.c": SELF_MACRO });
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  try {
    await graph.refresh();
    const found = (await graph.lookup("search_class", "typhoon_shared")).matches.map((m) =>
      `${m.symbol.name} ${m.symbol.startLine}-${m.symbol.endLine}`
    );
    assert.deepEqual(found, ["typhoon_shared 2-7"]);
  } finally {
    graph.close();
  }
});
