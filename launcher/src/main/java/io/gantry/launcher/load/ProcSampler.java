package io.gantry.launcher.load;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * CPU (% of one core) and resident memory of named process groups, from /proc, once per {@link #sample()}.
 *
 * <p>A group is a fixed pid (a service JVM, the JVM holding the broker) or "every descendant of a pid whose
 * command is postgres" (PostgreSQL forks a backend per connection, so the set changes while we watch). CPU is
 * the difference of utime+stime between two samples over the wall time between them; a pid seen for the first
 * time counts from its start. The load generator's own threads are measured separately with the JVM's thread
 * CPU clock, so its share of the launcher JVM can be told apart from the broker's.
 */
public final class ProcSampler {
    /** One value per group: CPU % of one core since the last sample, and RSS in MiB (summed over its pids). */
    public record Usage(double cpuPercent, double rssMiB) {
    }

    private interface Group {
        List<Long> pids(Map<Long, Long> parents, Map<Long, String> comms);
    }

    private static final long TICKS_PER_SECOND = 100; // USER_HZ; 100 on every Linux we run on
    private final Map<String, Group> groups = new LinkedHashMap<>();
    private final Map<String, Map<Long, Long>> lastTicks = new HashMap<>();
    private final Map<Long, Long> lastThreadNanos = new HashMap<>();
    private final List<String> loadThreadPrefixes;
    private long lastWall = -1;
    private final boolean available = Files.isDirectory(Path.of("/proc/self"));

    public ProcSampler(List<String> loadThreadPrefixes) {
        this.loadThreadPrefixes = List.copyOf(loadThreadPrefixes);
    }

    public boolean available() {
        return available;
    }

    public ProcSampler pid(String name, LongSupplier pid) {
        groups.put(name, (parents, comms) -> {
            long p = pid.getAsLong();
            return p > 0 ? List.of(p) : List.of();
        });
        return this;
    }

    /** Every process below {@code root} whose command is {@code comm} (e.g. the postgres postmaster and backends). */
    public ProcSampler descendants(String name, long root, String comm) {
        groups.put(name, (parents, comms) -> {
            List<Long> out = new ArrayList<>();
            for (Map.Entry<Long, String> e : comms.entrySet()) {
                if (e.getValue().equals(comm) && descendsFrom(e.getKey(), root, parents)) {
                    out.add(e.getKey());
                }
            }
            return out;
        });
        return this;
    }

    /**
     * Every process with command {@code comm} whose command line contains {@code fragment}, and its descendants
     * with the same command: PostgreSQL's postmaster (started with its data directory, detached by pg_ctl, so it is
     * nobody's child) and the backends it forks.
     */
    public ProcSampler tree(String name, String comm, String fragment) {
        groups.put(name, (parents, comms) -> {
            List<Long> roots = new ArrayList<>();
            for (Map.Entry<Long, String> e : comms.entrySet()) {
                if (e.getValue().equals(comm) && commandLine(e.getKey()).contains(fragment)) {
                    roots.add(e.getKey());
                }
            }
            List<Long> out = new ArrayList<>(roots);
            for (Map.Entry<Long, String> e : comms.entrySet()) {
                if (e.getValue().equals(comm) && !roots.contains(e.getKey())
                        && roots.stream().anyMatch(r -> descendsFrom(e.getKey(), r, parents))) {
                    out.add(e.getKey());
                }
            }
            return out;
        });
        return this;
    }

    private static String commandLine(long pid) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")), StandardCharsets.UTF_8)
                    .replace('\0', ' ');
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    public List<String> names() {
        List<String> n = new ArrayList<>(groups.keySet());
        n.add(LOAD_GENERATOR);
        n.add(JIT);
        n.add(GC);
        n.add(MACHINE);
        return n;
    }

    public static final String LOAD_GENERATOR = "load generator threads";
    /** This JVM's JIT compiler threads (the broker's code and the harness's are compiled by the same threads). */
    public static final String JIT = "harness JIT compiler threads";
    /** This JVM's garbage collection and VM operation threads. */
    public static final String GC = "harness GC and VM threads";
    private final Map<String, Long> lastOwnThreadTicks = new HashMap<>();

    /** Every process on the host (/proc/stat: all CPU time but idle and iowait); the rest of it is other work. */
    public static final String MACHINE = "whole machine (every process)";
    private long lastMachineBusy = -1;
    private long lastMachineWall;

    /** Whether a row is a process (with a resident set) rather than threads of this JVM or the whole machine. */
    public static boolean isProcess(String row) {
        return !row.equals(LOAD_GENERATOR) && !row.equals(JIT) && !row.equals(GC) && !row.equals(MACHINE);
    }

    private static long machineBusyTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) { // user .. steal; guest time is already in user
                total += Long.parseLong(f[i]);
            }
            return total - Long.parseLong(f[4]) - Long.parseLong(f[5]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    public synchronized Map<String, Usage> sample() {
        Map<String, Usage> out = new LinkedHashMap<>();
        if (!available) {
            return out;
        }
        long wall = System.nanoTime();
        double seconds = lastWall < 0 ? 0 : (wall - lastWall) / 1e9;
        Map<Long, Long> parents = new HashMap<>();
        Map<Long, String> comms = new HashMap<>();
        scan(parents, comms);
        for (Map.Entry<String, Group> g : groups.entrySet()) {
            Map<Long, Long> before = lastTicks.computeIfAbsent(g.getKey(), k -> new HashMap<>());
            Map<Long, Long> now = new HashMap<>();
            long deltaTicks = 0;
            double rss = 0;
            for (long pid : g.getValue().pids(parents, comms)) {
                long ticks = cpuTicks(pid);
                if (ticks < 0) {
                    continue;
                }
                now.put(pid, ticks);
                deltaTicks += ticks - before.getOrDefault(pid, lastWall < 0 ? ticks : 0L);
                rss += rssKiB(pid) / 1024.0;
            }
            lastTicks.put(g.getKey(), now);
            double cpu = seconds <= 0 ? 0 : 100.0 * deltaTicks / TICKS_PER_SECOND / seconds;
            out.put(g.getKey(), new Usage(cpu, rss));
        }
        out.put(LOAD_GENERATOR, new Usage(seconds <= 0 ? 0 : loadThreadsCpuDelta() / 1e7 / seconds, 0));
        Map<String, Long> own = ownThreadTicks();
        for (String kind : List.of(JIT, GC)) {
            long delta = own.getOrDefault(kind, 0L) - lastOwnThreadTicks.getOrDefault(kind, own.getOrDefault(kind, 0L));
            out.put(kind, new Usage(seconds <= 0 ? 0 : 100.0 * Math.max(0, delta) / TICKS_PER_SECOND / seconds, 0));
        }
        lastOwnThreadTicks.clear();
        lastOwnThreadTicks.putAll(own);
        long busy = machineBusyTicks();
        long machineWall = System.nanoTime(); // its own interval: the process scan before it takes varying time
        double machineSeconds = (machineWall - lastMachineWall) / 1e9;
        out.put(MACHINE, new Usage(lastMachineBusy < 0 || machineSeconds <= 0 ? 0
                : 100.0 * (busy - lastMachineBusy) / TICKS_PER_SECOND / machineSeconds, 0));
        lastMachineBusy = busy;
        lastMachineWall = machineWall;
        lastWall = wall;
        return out;
    }

    /**
     * CPU ticks of this JVM's own compiler and GC/VM threads so far, by /proc task name (these threads are not
     * Java threads the ThreadMXBean lists). A thread that ended takes its ticks with it: a small undercount.
     */
    private static Map<String, Long> ownThreadTicks() {
        Map<String, Long> out = new HashMap<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : dir) {
                String[] stat = stat(task.resolve("stat"));
                if (stat == null || stat.length < 14) {
                    continue;
                }
                String comm = stat[0];
                String kind = comm.contains("CompilerThre") ? JIT
                        : comm.startsWith("VM Thread") || comm.startsWith("GC Thread") || comm.startsWith("G1 ")
                        ? GC : null;
                if (kind != null) {
                    out.merge(kind, Long.parseLong(stat[12]) + Long.parseLong(stat[13]), Long::sum);
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc/self/task: nothing counted
        }
        return out;
    }

    private long loadThreadsCpuDelta() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isThreadCpuTimeSupported()) {
            return 0;
        }
        long delta = 0;
        Map<Long, Long> seen = new HashMap<>();
        for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (t == null || loadThreadPrefixes.stream().noneMatch(p -> t.getThreadName().startsWith(p))) {
                continue;
            }
            long cpu = mx.getThreadCpuTime(t.getThreadId());
            if (cpu < 0) {
                continue;
            }
            seen.put(t.getThreadId(), cpu);
            delta += cpu - lastThreadNanos.getOrDefault(t.getThreadId(), lastWall < 0 ? cpu : 0L);
        }
        lastThreadNanos.clear();
        lastThreadNanos.putAll(seen);
        return delta;
    }

    private static boolean descendsFrom(long pid, long root, Map<Long, Long> parents) {
        for (int depth = 0; depth < 64 && pid > 1; depth++) {
            Long parent = parents.get(pid);
            if (parent == null) {
                return false;
            }
            if (parent == root) {
                return true;
            }
            pid = parent;
        }
        return false;
    }

    private static void scan(Map<Long, Long> parents, Map<Long, String> comms) {
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path p : dir) {
                String[] stat = stat(Long.parseLong(p.getFileName().toString()));
                if (stat != null) {
                    long pid = Long.parseLong(p.getFileName().toString());
                    comms.put(pid, stat[0]);
                    parents.put(pid, Long.parseLong(stat[2]));
                }
            }
        } catch (IOException e) {
            // /proc is gone or unreadable: nothing to sample this time
        }
    }

    /** Fields of /proc/pid/stat with the command (field 2, in parentheses, may hold spaces) as element 0. */
    private static String[] stat(long pid) {
        return stat(Path.of("/proc", Long.toString(pid), "stat"));
    }

    private static String[] stat(Path file) {
        try {
            String s = Files.readString(file, StandardCharsets.UTF_8);
            int open = s.indexOf('(');
            int close = s.lastIndexOf(')');
            String comm = s.substring(open + 1, close);
            String[] rest = s.substring(close + 2).trim().split(" ");
            String[] out = new String[rest.length + 1];
            out[0] = comm;
            System.arraycopy(rest, 0, out, 1, rest.length);
            return out; // out[1] = state, out[2] = ppid, out[12] = utime, out[13] = stime
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static long cpuTicks(long pid) {
        String[] s = stat(pid);
        if (s == null || s.length < 14) {
            return -1;
        }
        return Long.parseLong(s[12]) + Long.parseLong(s[13]);
    }

    private static long rssKiB(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("\\D", ""));
                }
            }
        } catch (IOException | RuntimeException e) {
            // the process exited between the scan and this read
        }
        return 0;
    }

    /** Pids of processes whose command line contains every one of the given fragments (for a stack we did not start). */
    public static List<Long> findByCommandLine(List<String> fragments) {
        List<Long> out = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path p : dir) {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8).replace('\0', ' ');
                    if (fragments.stream().allMatch(cmd::contains)) {
                        out.add(Long.parseLong(p.getFileName().toString()));
                    }
                } catch (IOException | RuntimeException e) {
                    // exited or not ours to read
                }
            }
        } catch (IOException e) {
            // no /proc
        }
        return out;
    }
}
