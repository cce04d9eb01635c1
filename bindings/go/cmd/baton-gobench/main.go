// Command baton-gobench is baton-bench's uncontended and contended
// workloads (baton-bench(1)) through the Go client, so that the two
// clients can be measured against each other on one cluster:
// scripts/bench --go runs both, alternating.
//
// Each client is a goroutine with its own baton.Client (its own
// connection and session, as baton-bench's threads each have their own
// handle). An op is Lock followed by Unlock of the same lock, both
// acknowledged by the cluster: uncontended, client i's own lock
// PREFIX-ci, latency from the Lock call to the Unlock's answer;
// contended, every client's lock PREFIX-shared, latency the Lock's wait.
// Each call is bounded by --op-timeout-ms, as baton-bench bounds its
// acquire's wait and libbaton its requests (Lock asks the cluster to wait
// without limit and withdraws the wait when the context ends; baton-bench
// sends the timeout as the wait). Clients run ops back to back for warmup
// + duration seconds; only ops whose Unlock is answered inside the
// measured window count. Prints one JSON line on stdout in baton-bench's
// result format, with "client":"go", "driver":"baton-go", the Go version
// and GOMAXPROCS added (baton-bench's line has no "client"); diagnostics
// go to stderr. --cpuprofile FILE writes a pprof CPU profile of the
// measured window. TLS comes from BATON_CACERT, BATON_CERT and BATON_KEY,
// the cluster from --endpoints, else BATON_ENDPOINTS, else
// baton.DefaultEndpoints.
//
//	eval "$(scripts/cluster env)"
//	cd bindings/go && go run ./cmd/baton-gobench --workload uncontended --clients 16
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"baton.dev/baton"
)

const (
	driver          = "baton-go"
	maxSamples      = 4 * 1000 * 1000 // per client, as baton-bench
	maxErrorsLogged = 20
)

// config is the command line, in baton-bench's units.
type config struct {
	workload       string
	contended      bool
	clients        int
	durationS      float64
	warmupS        float64
	endpoints      string
	nodes          int
	system         string
	variant        string
	prefix         string
	ttlMs          int64
	opTimeoutMs    int64
	holdUs         int64
	errorBackoffMs int64
	cpuProfile     string
}

// bench is one run: its clock, window and the clients' shared settings.
type bench struct {
	cfg      config
	bc       baton.Config
	base     time.Time // the clock's zero: now() is seconds since
	tMeasure float64
	tEnd     float64
	logged   atomic.Int32
}

func (b *bench) now() float64 { return time.Since(b.base).Seconds() }

// client is one goroutine's counts and samples.
type client struct {
	idx    int
	lat    []uint32 // op latency or acquire wait, µs
	done   []uint32 // completion time, µs after tMeasure
	ops    uint64
	errors uint64
	maxGap float64 // s
}

func toU32(us float64) uint32 {
	return uint32(math.Min(math.Max(us, 0), 4e9) + 0.5)
}

func (cl *client) record(latUs, doneUs float64) {
	if len(cl.lat) >= maxSamples {
		return
	}
	cl.lat = append(cl.lat, toU32(latUs))
	cl.done = append(cl.done, toU32(doneUs))
}

// failed: a failed Dial, Lock or Unlock, counted if it ends inside the
// window, logged (the first few of the run), then the error backoff.
func (cl *client) failed(b *bench, what string, err error) {
	t := b.now()
	if t >= b.tMeasure && t <= b.tEnd {
		cl.errors++
	}
	if b.logged.Add(1) <= maxErrorsLogged {
		fmt.Fprintf(os.Stderr, "baton-gobench: t=%.3fs client %d: %s failed: %v\n",
			t-b.tMeasure, cl.idx, what, err)
	}
	time.Sleep(time.Duration(b.cfg.errorBackoffMs) * time.Millisecond)
}

// lockName is the workload's lock of client idx.
func lockName(cfg *config, idx int) string {
	if cfg.contended {
		return cfg.prefix + "-shared"
	}
	return fmt.Sprintf("%s-c%d", cfg.prefix, idx)
}

// opContext bounds one call as baton-bench's --op-timeout-ms bounds its
// acquire's wait and libbaton's request timeout.
func (b *bench) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(),
		time.Duration(b.cfg.opTimeoutMs)*time.Millisecond)
}

func (cl *client) run(b *bench) {
	cfg := &b.cfg
	lastOK := b.tMeasure // the window start is a boundary
	name := lockName(cfg, cl.idx)
	bc := b.bc
	bc.Name = fmt.Sprintf("baton-gobench-c%d", cl.idx)
	var c *baton.Client
	for b.now() < b.tEnd {
		if c == nil {
			ctx, cancel := b.opContext()
			h, err := baton.Dial(ctx, bc)
			cancel()
			if err != nil {
				cl.failed(b, "open", err)
				continue
			}
			c = h
		}
		ctx, cancel := b.opContext()
		t0 := b.now()
		l, err := c.Lock(ctx, name)
		cancel()
		if err != nil {
			cl.failed(b, "acquire", err)
			continue
		}
		t1 := b.now()
		if cfg.holdUs > 0 {
			time.Sleep(time.Duration(cfg.holdUs) * time.Microsecond)
		}
		ctx, cancel = b.opContext()
		err = l.Unlock(ctx)
		cancel()
		if err != nil {
			cl.failed(b, "release", err)
			continue
		}
		t2 := b.now()
		if t2 >= b.tMeasure && t2 <= b.tEnd {
			cl.ops++
			lat := t2 - t0
			if cfg.contended {
				lat = t1 - t0
			}
			cl.record(lat*1e6, (t2-b.tMeasure)*1e6)
			cl.maxGap = max(cl.maxGap, t2-lastOK)
			lastOK = t2
		}
	}
	// the window end is a boundary too
	cl.maxGap = max(cl.maxGap, b.tEnd-lastOK)
	if c != nil {
		ctx, cancel := b.opContext()
		_ = c.Close(ctx)
		cancel()
	}
}

// sleepUntil sleeps until b.now() reaches t.
func (b *bench) sleepUntil(t float64) {
	if d := t - b.now(); d > 0 {
		time.Sleep(time.Duration(d * 1e9))
	}
}

// rankOf is the nearest rank, 1-based, of quantile q of n sorted samples.
func rankOf(n int, q float64) int {
	r := int(math.Ceil(q * float64(n)))
	return min(max(r, 1), n)
}

func percentile(s []uint32, q float64) uint32 {
	if len(s) == 0 {
		return 0
	}
	return s[rankOf(len(s), q)-1]
}

// longestSilence is the longest interval of the window with no
// completion by anyone (the sorted completion times, µs); the window's
// start and end are boundaries. Returns it and its start, in s.
func longestSilence(done []uint32, durationS float64) (float64, float64) {
	gap, prev, at := 0.0, 0.0, 0.0
	for _, d := range done {
		t := float64(d) / 1e6
		if t-prev > gap {
			gap, at = t-prev, prev
		}
		prev = t
	}
	if durationS-prev > gap {
		gap, at = durationS-prev, prev
	}
	return gap, at
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// summarize writes the run's one JSON line from the clients' counts and
// samples, in baton-bench's field order and number formats.
func summarize(w io.Writer, b *bench, cs []client, cpu float64) {
	var ops, errs uint64
	var lat, done []uint32
	gaps := make([]float64, len(cs))
	maxGap := 0.0
	for i := range cs {
		ops += cs[i].ops
		errs += cs[i].errors
		lat = append(lat, cs[i].lat...)
		done = append(done, cs[i].done...)
		maxGap = max(maxGap, cs[i].maxGap)
		gaps[i] = cs[i].maxGap
	}
	slices.Sort(lat)
	slices.Sort(done)
	slices.Sort(gaps)
	sysGap, sysGapAt := longestSilence(done, b.cfg.durationS)
	var maxUs uint32
	if len(lat) > 0 {
		maxUs = lat[len(lat)-1]
	}
	cfg := &b.cfg
	fmt.Fprintf(w, "{\"system\":%s,\"nodes\":%d,\"workload\":%s,"+
		"\"clients\":%d,\"ops\":%d,\"seconds\":%.3f,"+
		"\"ops_per_s\":%.1f,\"p50_us\":%d,\"p99_us\":%d,\"errors\":%d,"+
		"\"max_us\":%d,\"max_gap_ms\":%.1f,\"client_gap_p50_ms\":%.1f,"+
		"\"sys_gap_ms\":%.1f,\"sys_gap_at_s\":%.3f,",
		jsonString(cfg.system), cfg.nodes, jsonString(cfg.workload),
		cfg.clients, ops, cfg.durationS, float64(ops)/cfg.durationS,
		percentile(lat, 0.50), percentile(lat, 0.99), errs, maxUs,
		maxGap*1e3, gaps[rankOf(len(gaps), 0.5)-1]*1e3, sysGap*1e3, sysGapAt)
	fmt.Fprintf(w, "\"client_cpu_s\":%.3f,\"variant\":%s,\"driver\":%s,"+
		"\"client\":\"go\",\"go\":%s,\"gomaxprocs\":%d}\n",
		cpu, jsonString(cfg.variant), jsonString(driver),
		jsonString(runtime.Version()), runtime.GOMAXPROCS(0))
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: baton-gobench [--workload uncontended|contended]"+
		" [--clients C] [--duration S]\n"+
		"         [--warmup S] [--endpoints H:P,...] [--nodes N]"+
		" [--system NAME] [--variant TEXT]\n"+
		"         [--prefix P] [--ttl-ms MS] [--op-timeout-ms MS]"+
		" [--hold-us US]\n"+
		"         [--error-backoff-ms MS] [--cpuprofile FILE]\n"+
		"The cluster: --endpoints, else $BATON_ENDPOINTS, else %s.\n"+
		"TLS: BATON_CACERT, BATON_CERT and BATON_KEY (all three, or none"+
		" for plain TCP).\n", baton.DefaultEndpoints)
}

// parseArgs reads the command line into a config with baton-bench's
// defaults and ranges; an error says what is wrong.
func parseArgs(args []string) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("baton-gobench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.workload, "workload", "uncontended", "")
	fs.IntVar(&cfg.clients, "clients", 1, "")
	fs.Float64Var(&cfg.durationS, "duration", 10, "")
	fs.Float64Var(&cfg.warmupS, "warmup", 1, "")
	fs.StringVar(&cfg.endpoints, "endpoints", "", "")
	fs.IntVar(&cfg.nodes, "nodes", 3, "")
	fs.StringVar(&cfg.system, "system", "baton", "")
	fs.StringVar(&cfg.variant, "variant", "", "")
	fs.StringVar(&cfg.prefix, "prefix", "lockbench", "")
	fs.Int64Var(&cfg.ttlMs, "ttl-ms", 10000, "")
	fs.Int64Var(&cfg.opTimeoutMs, "op-timeout-ms", 5000, "")
	fs.Int64Var(&cfg.holdUs, "hold-us", 0, "")
	fs.Int64Var(&cfg.errorBackoffMs, "error-backoff-ms", 10, "")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %s", fs.Arg(0))
	}
	bad := func(flag string, v any) error {
		return fmt.Errorf("bad value for --%s: %v", flag, v)
	}
	switch {
	case cfg.workload == "contended":
		cfg.contended = true
	case cfg.workload != "uncontended":
		return cfg, fmt.Errorf("workload %s: baton-gobench runs uncontended"+
			" and contended (baton-bench runs the others)", cfg.workload)
	}
	switch {
	case cfg.clients < 1 || cfg.clients > 4096:
		return cfg, bad("clients", cfg.clients)
	case !(cfg.durationS >= 1e-3 && cfg.durationS <= 3600):
		return cfg, bad("duration", cfg.durationS)
	case !(cfg.warmupS >= 0 && cfg.warmupS <= 600):
		return cfg, bad("warmup", cfg.warmupS)
	case cfg.nodes < 1 || cfg.nodes > 1000:
		return cfg, bad("nodes", cfg.nodes)
	case cfg.ttlMs < 1 || cfg.ttlMs > math.MaxUint32/2:
		return cfg, bad("ttl-ms", cfg.ttlMs)
	case cfg.opTimeoutMs < 1 || cfg.opTimeoutMs > math.MaxInt32/2:
		return cfg, bad("op-timeout-ms", cfg.opTimeoutMs)
	case cfg.holdUs < 0 || cfg.holdUs > 60000000:
		return cfg, bad("hold-us", cfg.holdUs)
	case cfg.errorBackoffMs < 0 || cfg.errorBackoffMs > 600000:
		return cfg, bad("error-backoff-ms", cfg.errorBackoffMs)
	case len(cfg.prefix) == 0 || len(cfg.prefix) > 240:
		return cfg, errors.New("--prefix: 1..240 bytes")
	}
	return cfg, nil
}

// clientConfig is the Go client's Config: the environment's (TLS, and
// BATON_ENDPOINTS), --endpoints over it, the TTL of --ttl-ms.
func clientConfig(cfg *config) (baton.Config, error) {
	bc, err := baton.ConfigFromEnv()
	if err != nil {
		return bc, err
	}
	if cfg.endpoints != "" {
		bc.Endpoints = strings.Split(cfg.endpoints, ",")
	}
	bc.TTL = time.Duration(cfg.ttlMs) * time.Millisecond
	return bc, nil
}

func run(cfg config) int {
	bc, err := clientConfig(&cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baton-gobench:", err)
		return 1
	}
	var prof *os.File // made now, so that a bad path stops the run first
	if cfg.cpuProfile != "" {
		if prof, err = os.Create(cfg.cpuProfile); err != nil {
			fmt.Fprintln(os.Stderr, "baton-gobench:", err)
			return 1
		}
		defer prof.Close()
	}
	b := &bench{cfg: cfg, bc: bc, base: time.Now()}
	b.tMeasure = b.cfg.warmupS
	b.tEnd = b.tMeasure + b.cfg.durationS
	cs := make([]client, cfg.clients)
	var wg sync.WaitGroup
	for i := range cs {
		cs[i].idx = i
		wg.Add(1)
		go func(cl *client) {
			defer wg.Done()
			cl.run(b)
		}(&cs[i])
	}
	// The CPU and the profile of the measured window alone, as
	// baton-bench's client_cpu_s: not the handshakes of the warmup.
	b.sleepUntil(b.tMeasure)
	if prof != nil {
		if err := pprof.StartCPUProfile(prof); err != nil {
			fmt.Fprintln(os.Stderr, "baton-gobench: cpuprofile:", err)
		}
	}
	start := cpuS()
	b.sleepUntil(b.tEnd)
	cpu := cpuS() - start
	if prof != nil {
		pprof.StopCPUProfile()
	}
	wg.Wait()
	summarize(os.Stdout, b, cs, cpu)
	return 0
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		usage(os.Stdout)
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "baton-gobench:", err)
		usage(os.Stderr)
		os.Exit(2)
	}
	os.Exit(run(cfg))
}
