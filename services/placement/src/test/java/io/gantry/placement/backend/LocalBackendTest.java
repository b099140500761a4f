package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.GpuShare;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class LocalBackendTest {
    private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

    @TempDir
    Path work;
    private LocalBackend backend;
    private final List<RunOutcome> outcomes = new ArrayList<>();

    private static NodeSpec node() {
        return new NodeSpec("local", "local", List.of(new Gpu(0, "L4", 0), new Gpu(1, "L4", 0)), 4000, 4096,
                Map.of());
    }

    private LocalBackend backend() {
        NodeSpec node = node();
        backend = new LocalBackend(node, work, ROOT ? LocalBackend.resolveRunAs("nobody") : null,
                new VirtualClock(Clock.systemUTC(), 1));
        return backend;
    }

    @AfterEach
    void stopEverything() {
        if (backend != null) {
            backend.close();
        }
    }

    private static Allocation allocation(String jobId, PlacedTask... tasks) {
        return new Allocation("alloc-" + jobId, jobId, "vision", 2, List.of(tasks), Instant.now(), "local");
    }

    private static PlacedTask task(String name, int replica, Integer... gpus) {
        return new PlacedTask(name, replica, "local", gpus.length == 0 ? null : "L4", List.of(gpus), 100, 64);
    }

    private RunOutcome awaitOutcome() {
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            outcomes.addAll(backend.poll(Instant.now()));
            return !outcomes.isEmpty();
        });
        return outcomes.get(0);
    }

    @Test
    void aTaskSeesItsGpuIndicesAndIdentityAndItsOutputLandsInItsLog() throws Exception {
        LocalBackend b = backend();
        Allocation a = allocation("job-1", task("main", 0, 0, 1), task("cpu", 0));
        String script = "echo gpus=[$CUDA_VISIBLE_DEVICES] job=$GANTRY_JOB_ID task=$GANTRY_TASK replica=$GANTRY_REPLICA uid=$(id -u)";
        RunPlan plan = new RunPlan(Map.of("main", new RunPlan.Task(List.of("sh", "-c", script), null),
                "cpu", new RunPlan.Task(List.of("sh", "-c", script + " >&2"), null)));

        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        RunOutcome outcome = awaitOutcome();

        assertThat(outcome.result().succeeded()).as(outcome.toString()).isTrue();
        assertThat(outcome.result().exitCode()).isZero();
        String main = Files.readString(work.resolve("job-1/2/main-0.log"));
        String cpu = Files.readString(work.resolve("job-1/2/cpu-0.log"));
        assertThat(main).contains("gpus=[0,1] job=job-1 task=main replica=0");
        assertThat(cpu).as("stderr goes to the log too; no GPUs means empty").contains("gpus=[] job=job-1 task=cpu");
        if (ROOT) {
            assertThat(main).as("root drops to nobody").contains("uid=65534");
        }
    }

    @Test
    void aTaskIsToldItsRunTokenItsCheckpointDirectoryWhereToResumeAndWhereToReportButNothingOfPlacementsOwnEnvironment()
            throws Exception {
        LocalBackend b = new LocalBackend(backend().nodes().get(0), work, null, java.time.Clock.systemUTC(), false,
                "http://127.0.0.1:8080");
        Allocation a = allocation("job-ck", task("main", 0));
        RunPlan plan = new RunPlan(Map.of("main", new RunPlan.Task(List.of("sh", "-c",
                "echo token=$GANTRY_RUN_TOKEN dir=$GANTRY_CHECKPOINT_DIR api=$GANTRY_API_URL home=[$JAVA_HOME] "
                        + "resume=$GANTRY_RESUME_FROM"),
                null)), "gtr_abc", "/ckpt/job-ck").resumingFrom("/ckpt/job-ck/step-9.pt");

        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        await().atMost(Duration.ofSeconds(20)).until(() -> !b.poll(Instant.now()).isEmpty());

        assertThat(Files.readString(work.resolve("job-ck/2/main-0.log")))
                .contains("token=gtr_abc dir=/ckpt/job-ck api=http://127.0.0.1:8080 home=[] "
                        + "resume=/ckpt/job-ck/step-9.pt");
    }

    @Test
    void aMissingWorkingDirectoryFailsTheStartSayingSo() {
        LocalBackend b = backend();
        Optional<RunOutcome> out = b.start(allocation("job-wd", task("w", 0)), new RunPlan(Map.of("w",
                new RunPlan.Task(List.of("true"), null, Map.of(), work.resolve("missing").toString(), null, List.of()))),
                Instant.now());

        assertThat(out).hasValueSatisfying(o -> assertThat(o.result().message()).isEqualTo("could not start task w-0: "
                + "its workingDir " + work.resolve("missing") + " is not a directory on this host"));
    }

    @Test
    void eachTenantRunsAsItsOwnUserAndCannotReadOrEnterAnotherTenantsRun() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ROOT, "tasks run as another user only when placement is root");
        backend = new LocalBackend(node(), work, LocalBackend.RunAs.perTenant(LocalBackend.DEFAULT_TENANT_BASE),
                new VirtualClock(Clock.systemUTC(), 1));
        Allocation acme = new Allocation("alloc-acme", "job-acme", "acme", 1, List.of(task("w", 0)), Instant.now(),
                "local");
        Allocation evil = new Allocation("alloc-evil", "job-evil", "evil", 1, List.of(task("w", 0)), Instant.now(),
                "local");
        backend.start(acme, new RunPlan(Map.of("w", new RunPlan.Task(List.of("sh", "-c", "echo uid=$(id -u); "
                + "sleep 30"), null, Map.of("API_KEY", "sk-acme-secret"), null, null, List.of()))), Instant.now());
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.readString(work.resolve("job-acme/1/w-0.log"))
                .contains("uid="));
        // the other tenant looks for acme's secret in every process's environment, lists its run, writes its own
        // run's owner file to claim acme's name
        String probe = "echo uid=$(id -u); echo found=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' "
                + "| grep -c sk-acme-secret); ls " + work.resolve("job-acme/1") + " >/dev/null 2>&1 || echo "
                + "listing=refused; ls " + work + " >/dev/null 2>&1 || echo work=refused; "
                + "printf 'tenant=acme\\n' > gantry-run.properties";
        backend.start(evil, new RunPlan(Map.of("w", new RunPlan.Task(List.of("sh", "-c", probe), null))),
                Instant.now());
        await().atMost(Duration.ofSeconds(20)).until(() -> backend.poll(Instant.now()).stream()
                .anyMatch(o -> o.allocationId().equals("alloc-evil")));

        long base = LocalBackend.DEFAULT_TENANT_BASE;
        assertThat(Files.readString(work.resolve("job-acme/1/w-0.log"))).contains("uid=" + base);
        assertThat(Files.readString(work.resolve("job-evil/1/w-0.log"))).contains("uid=" + (base + 1), "found=0",
                "listing=refused", "work=refused");
        assertThat(Files.getAttribute(work.resolve("job-acme/1"), "unix:uid")).isEqualTo((int) base);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(
                work.resolve("job-acme/1")))).isEqualTo("rwx------");
        assertThat(backend.logs("job-evil", 1)).hasValueSatisfying(l -> assertThat(l.tenant())
                .as("the owner is placement's record, not a file the tasks can write").isEqualTo("evil"));
        backend.stop("alloc-acme");

        LocalBackend restarted = new LocalBackend(node(), work, LocalBackend.RunAs.perTenant(base),
                new VirtualClock(Clock.systemUTC(), 1));
        assertThat(restarted.identity("evil").uid()).as("a tenant keeps its uid").isEqualTo(Long.toString(base + 1));
        assertThat(restarted.identity("new").uid()).isEqualTo(Long.toString(base + 2));
        restarted.close();

        // a work directory everyone may write (a /tmp) keeps its mode: only what placement made in it is closed
        Path shared = Files.createDirectory(work.resolve("shared"));
        Files.setAttribute(shared, "unix:mode", 01777);
        LocalBackend inShared = new LocalBackend(node(), shared, LocalBackend.RunAs.perTenant(base),
                new VirtualClock(Clock.systemUTC(), 1));
        inShared.start(new Allocation("alloc-s", "job-s", "acme", 1, List.of(task("w", 0)), Instant.now(), "local"),
                new RunPlan(Map.of("w", new RunPlan.Task(List.of("true"), null))), Instant.now());
        assertThat((Integer) Files.getAttribute(shared, "unix:mode") & 07777).isEqualTo(01777);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(
                shared.resolve("job-s")))).isEqualTo("rwx--x--x");
        inShared.close();
    }

    @Test
    void aTaskRunAsTheUnprivilegedUserGetsTheSystemsPathNotPlacementsOwn() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ROOT, "tasks run as another user only when placement is root");
        LocalBackend b = backend();
        Allocation a = allocation("job-path", task("main", 0));
        b.start(a, new RunPlan(Map.of("main", new RunPlan.Task(List.of("sh", "-c", "echo path=$PATH"), null))),
                Instant.now());
        awaitOutcome();

        assertThat(Files.readString(work.resolve("job-path/2/main-0.log")))
                .contains("path=" + LocalBackend.SYSTEM_PATH + "\n");
    }

    @Test
    void aFailingTaskFailsTheRunWithItsExitCodeAndKillsTheOthers() throws Exception {
        LocalBackend b = backend();
        Allocation a = allocation("job-2", task("bad", 0), task("slow", 0));
        RunPlan plan = new RunPlan(Map.of(
                "bad", new RunPlan.Task(List.of("sh", "-c", "sleep 0.5; echo failing; exit 3"), null),
                "slow", new RunPlan.Task(List.of("sh", "-c", "echo $$ > pid; exec sleep 60"), null)));

        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        RunOutcome outcome = awaitOutcome();

        assertThat(outcome.result().succeeded()).isFalse();
        assertThat(outcome.result().exitCode()).isEqualTo(3);
        assertThat(outcome.result().message()).contains("bad-0 exited with 3");
        assertThat(Files.readString(work.resolve("job-2/2/bad-0.log"))).contains("failing");
        long pid = Long.parseLong(Files.readString(work.resolve("job-2/2/pid")).trim());
        await().atMost(Duration.ofSeconds(10)).until(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
    }

    @Test
    void aTaskGetsItsOwnVariablesWorkingDirectoryAndTheGangsRankWorldSizeAndRendezvous() throws Exception {
        LocalBackend b = backend();
        Path wd = Files.createDirectories(work.resolve("src"));
        if (ROOT) {
            wd.toFile().setWritable(true, false);
        }
        Allocation a = allocation("job-env", task("launcher", 0), task("worker", 1, 1), task("worker", 0, 0));
        String script = "echo foo=$FOO path=$PATH pwd=$(pwd) rank=$RANK world=$WORLD_SIZE grank=$GANTRY_RANK "
                + "gworld=$GANTRY_WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT hosts=$GANTRY_HOSTS "
                + "gpus=[$CUDA_VISIBLE_DEVICES]";
        RunPlan.Task worker = new RunPlan.Task(List.of("sh", "-c", script), null,
                Map.of("FOO", "bar baz", "PATH", "/opt/venv/bin:/usr/bin:/bin", "CUDA_VISIBLE_DEVICES", "7"),
                wd.toString(), "nvcr.io/nvidia/pytorch:24.05-py3", List.of(new RunPlan.Mount("/data", null, "d", true)));
        RunPlan plan = new RunPlan(Map.of("launcher", new RunPlan.Task(List.of("sh", "-c", script), null), "worker",
                worker));

        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        RunOutcome outcome = awaitOutcome();

        assertThat(outcome.result().succeeded()).as(outcome.toString()).isTrue();
        String launcher = Files.readString(work.resolve("job-env/2/launcher-0.log"));
        String w0 = Files.readString(work.resolve("job-env/2/worker-0.log"));
        String w1 = Files.readString(work.resolve("job-env/2/worker-1.log"));
        java.util.regex.Matcher port = java.util.regex.Pattern.compile("master=127\\.0\\.0\\.1:(\\d+) ")
                .matcher(launcher);
        assertThat(port.find()).as(launcher).isTrue();
        assertThat(launcher).contains("rank=0 world=3 grank=0 gworld=3")
                .contains("hosts=127.0.0.1,127.0.0.1,127.0.0.1").contains("pwd=" + work.resolve("job-env/2"));
        assertThat(w0).contains("foo=bar baz path=/opt/venv/bin:/usr/bin:/bin pwd=" + wd)
                .contains("rank=1 world=3").contains("master=127.0.0.1:" + port.group(1))
                .as("Gantry's devices win over the tenant's").contains("gpus=[0]");
        assertThat(w1).contains("rank=2 world=3").contains("gpus=[1]");
        assertThat(w0).startsWith("gantry: the local backend runs commands on the host: image "
                + "nvcr.io/nvidia/pytorch:24.05-py3 is not used\n"
                + "gantry: the local backend mounts nothing: [/data] are the host's own paths\n");
        assertThat(launcher).doesNotContain("gantry: the local backend");
    }

    @Test
    void aMissingWorkingDirectoryFailsTheRunSayingWhy() {
        LocalBackend b = backend();
        Allocation a = allocation("job-wd", task("main", 0));
        RunPlan plan = new RunPlan(Map.of("main", new RunPlan.Task(List.of("true"), null, Map.of(),
                "/nonexistent/gantry-wd", null, List.of())));

        Optional<RunOutcome> failed = b.start(a, plan, Instant.now());

        assertThat(failed).hasValueSatisfying(o -> assertThat(o.result().message())
                .contains("could not start task main-0").contains("/nonexistent/gantry-wd"));
    }

    @Test
    void underASuccessPolicyTheLeadersSuccessEndsTheRunAndKillsAWorkerThatWouldRunForever() throws Exception {
        LocalBackend b = backend();
        Allocation a = allocation("job-mpi", task("launcher", 0), task("worker", 0, 0), task("worker", 1, 1));
        RunPlan plan = new RunPlan(Map.of(
                "launcher", new RunPlan.Task(List.of("sh", "-c", "sleep 0.5; echo launched; exit 0"), null),
                "worker", new RunPlan.Task(List.of("sh", "-c", "echo $$ > pid-$GANTRY_REPLICA; exec sleep 600"),
                        null))).withSuccessLeader("launcher");

        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        RunOutcome outcome = awaitOutcome();

        assertThat(outcome.result().succeeded()).as(outcome.toString()).isTrue();
        for (String replica : List.of("0", "1")) {
            long pid = Long.parseLong(Files.readString(work.resolve("job-mpi/2/pid-" + replica)).trim());
            await().atMost(Duration.ofSeconds(10)).until(() -> ProcessHandle.of(pid).map(p -> !p.isAlive())
                    .orElse(true));
        }
        assertThat(b.poll(Instant.now())).as("one outcome only, the workers' deaths are not news").isEmpty();
    }

    @Test
    void underASuccessPolicyAWorkerFailingFirstFailsTheRun() {
        LocalBackend b = backend();
        Allocation a = allocation("job-mpi-bad", task("launcher", 0), task("worker", 0, 0));
        RunPlan plan = new RunPlan(Map.of(
                "launcher", new RunPlan.Task(List.of("sleep", "600"), null),
                "worker", new RunPlan.Task(List.of("sh", "-c", "exit 4"), null))).withSuccessLeader("launcher");

        b.start(a, plan, Instant.now());
        RunOutcome outcome = awaitOutcome();

        assertThat(outcome.result().succeeded()).isFalse();
        assertThat(outcome.result().exitCode()).isEqualTo(4);
        assertThat(outcome.result().message()).contains("worker-0 exited with 4");
    }

    @Test
    void aStoppedRunReportsNothing() throws Exception {
        LocalBackend b = backend();
        Allocation a = allocation("job-3", task("slow", 0));
        b.start(a, new RunPlan(Map.of("slow", new RunPlan.Task(List.of("sleep", "60"), null))), Instant.now());

        b.stop(a.allocationId());

        assertThat(b.poll(Instant.now())).isEmpty();
        assertThat(b.adopt(List.of(), Instant.now())).isEmpty();
    }

    @Test
    void aTaskWithoutACommandOrWithAMissingProgramFailsAtStart() {
        LocalBackend b = backend();

        Optional<RunOutcome> none = b.start(allocation("job-4", task("x", 0)),
                new RunPlan(Map.of("x", new RunPlan.Task(List.of(), null))), Instant.now());
        Optional<RunOutcome> missing = b.start(allocation("job-5", task("x", 0)),
                new RunPlan(Map.of("x", new RunPlan.Task(List.of("/nonexistent/program"), null))), Instant.now());

        assertThat(none).hasValueSatisfying(o -> assertThat(o.result().message()).contains("no command"));
        if (!ROOT) {
            assertThat(missing).hasValueSatisfying(o -> assertThat(o.result().message()).contains("could not start task x-0"));
        } else {
            // setpriv starts, then fails to exec the program: the run fails through its exit code instead
            assertThat(missing).isEmpty();
            RunOutcome outcome = awaitOutcome();
            assertThat(outcome.result().succeeded()).isFalse();
            assertThat(outcome.result().exitCode()).isNotZero();
        }
    }

    @Test
    void afterARestartALiveRunWhoseProcessIsGoneIsReportedLost() {
        LocalBackend b = backend();
        Allocation a = allocation("job-6", task("x", 0));

        List<RunOutcome> lost = b.adopt(List.of(new ExecutionBackend.LiveRun(a, null)), Instant.now());

        assertThat(lost).singleElement().satisfies(o -> {
            assertThat(o.allocationId()).isEqualTo(a.allocationId());
            assertThat(o.result().message()).isEqualTo("placement restarted; its processes were gone");
            assertThat(o.result().lost()).as("the infrastructure's loss, not the job's failure").isTrue();
        });
    }

    @Test
    void afterARestartWhatAnEarlierPlacementLeftRunningIsKilledBeforeItsGpusAreGivenAgain() throws Exception {
        LocalBackend before = backend();
        Allocation a = allocation("job-7", task("x", 0));
        before.start(a, new RunPlan(Map.of("x", new RunPlan.Task(List.of("sh", "-c", "sleep 60 & wait"), null))),
                Instant.now());
        Path pidFile = work.resolve("job-7").resolve(a.attempt() + LocalBackend.META_SUFFIX)
                .resolve("x-0" + LocalBackend.PID_SUFFIX);
        long pid = Long.parseLong(java.nio.file.Files.readString(pidFile).strip().split(" ")[0]);
        ProcessHandle orphan = ProcessHandle.of(pid).orElseThrow();
        List<ProcessHandle> children = org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5))
                .until(() -> orphan.descendants().toList(), l -> !l.isEmpty());

        // a new placement process over the same run directories (the old one was killed: its children run on)
        LocalBackend after = new LocalBackend(node(), work, ROOT ? LocalBackend.resolveRunAs("nobody") : null,
                new VirtualClock(Clock.systemUTC(), 1));
        List<RunOutcome> out = after.adopt(List.of(new ExecutionBackend.LiveRun(a, null)), Instant.now());

        assertThat(out).singleElement().satisfies(o -> {
            assertThat(o.result().lost()).isTrue();
            assertThat(o.result().message()).isEqualTo("placement restarted; 1 of its processes still ran and were "
                    + "killed");
        });
        assertThat(orphan.isAlive()).isFalse();
        assertThat(children).noneMatch(ProcessHandle::isAlive);
    }

    @Test
    void terminateSendsSigtermSoATaskCanCheckpointAndExitOnItsOwn() throws Exception {
        LocalBackend b = backend();
        Allocation a = allocation("job-term", task("main", 0, 0));
        // the task saves a "checkpoint" on SIGTERM and exits 143, as the default action would
        String script = "trap 'echo checkpointed; exit 143' TERM; echo started; while true; do sleep 0.1; done";
        RunPlan plan = new RunPlan(Map.of("main", new RunPlan.Task(List.of("sh", "-c", script), null)));
        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        Path log = work.resolve("job-term/2/main-0.log");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(log) && Files.readString(log).contains("started"));

        b.terminate(a.allocationId());
        RunOutcome outcome = awaitOutcome();

        assertThat(outcome.result().succeeded()).isFalse();
        assertThat(outcome.result().exitCode()).isEqualTo(143);
        assertThat(Files.readString(log)).contains("checkpointed");
    }

    @Test
    void aTaskWokenBySigtermFindsItsPreemptionNoticeWithTheReasonAndDeadline() throws Exception {
        LocalBackend b = backend();
        // the task user reaches the notice by its absolute path (JUnit's temporary directory is the owner's only)
        Files.setPosixFilePermissions(work, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Allocation a = allocation("job-notice", task("main", 0, 0));
        // no notice while the run is not being stopped; on SIGTERM the notice is already there
        String script = "test -e \"$GANTRY_PREEMPTION_NOTICE\" && echo early-notice; "
                + "trap 'cat \"$GANTRY_PREEMPTION_NOTICE\"; exit 143' TERM; echo started; while true; do sleep 0.1; done";
        RunPlan plan = new RunPlan(Map.of("main", new RunPlan.Task(List.of("sh", "-c", script), null)));
        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        Path log = work.resolve("job-notice/2/main-0.log");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(log) && Files.readString(log).contains("started"));

        Instant now = Instant.parse("2026-11-25T04:00:00Z");
        b.notice(a.allocationId(), new PreemptionNotice("job-notice", 2, "PREEMPTED",
                "queue vision reclaims 1 x L4 lent to \"research\"", now, now.plusSeconds(30)));
        b.terminate(a.allocationId());
        RunOutcome outcome = awaitOutcome();

        assertThat(outcome.result().exitCode()).isEqualTo(143);
        assertThat(Files.readString(log)).doesNotContain("early-notice")
                .contains("{\"preempting\":true,\"jobId\":\"job-notice\",\"attempt\":2,\"reason\":\"PREEMPTED\","
                        + "\"message\":\"queue vision reclaims 1 x L4 lent to \\\"research\\\"\",\"noticeAt\":"
                        + "\"2026-11-25T04:00:00Z\",\"deadline\":\"2026-11-25T04:00:30Z\",\"graceSeconds\":30}");
        assertThat(work.resolve("job-notice/2/" + PreemptionNotice.FILE + ".part")).doesNotExist();
    }

    @Test
    void aRunsLogsAreListedWithTheirOwnerAndReadFromAnOffset() throws Exception {
        LocalBackend b = backend();
        Allocation a = allocation("job-logs", task("main", 0, 0), task("main", 1, 1));
        RunPlan plan = new RunPlan(Map.of("main", new RunPlan.Task(List.of("sh", "-c",
                "echo line-one-$GANTRY_REPLICA; echo line-two"), null)));
        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        awaitOutcome();

        ExecutionBackend.RunLogs run = b.logs("job-logs", null).orElseThrow();
        assertThat(run.tenant()).isEqualTo("vision");
        assertThat(run.attempt()).as("the newest run").isEqualTo(2);
        assertThat(run.logs()).extracting(ExecutionBackend.LogName::task, ExecutionBackend.LogName::replica)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("main", 0),
                        org.assertj.core.groups.Tuple.tuple("main", 1));
        ExecutionBackend.LogChunk whole = b.readLog("job-logs", 2, "main", 1, 0, 1 << 20).orElseThrow();
        assertThat(whole.text()).endsWith("line-one-1\nline-two\n");
        assertThat(whole.nextOffset()).isEqualTo(whole.size());
        ExecutionBackend.LogChunk rest = b.readLog("job-logs", 2, "main", 1, whole.size() - 9, 4).orElseThrow();
        assertThat(rest.text()).isEqualTo("line");
        assertThat(rest.nextOffset()).isEqualTo(whole.size() - 5);

        assertThat(b.logs("job-logs", 1)).as("no such run").isEmpty();
        assertThat(b.logs("no-job", null)).isEmpty();
        assertThat(b.logs("../etc", null)).isEmpty();
        assertThat(b.readLog("job-logs", 2, "../../x", 0, 0, 10)).isEmpty();
        assertThat(b.readLog("job-logs", 2, "a\0b", 0, 0, 10)).as("no file has a NUL in its name").isEmpty();
        assertThat(b.readLog("job-logs", 2, "main", 7, 0, 10)).isEmpty();
    }

    @Test
    void aNoticeForARunThatIsNotRunningHereWritesNothing() {
        LocalBackend b = backend();
        Instant now = Instant.now();
        b.notice("alloc-nope", new PreemptionNotice("nope", 1, "PREEMPTED", null, now, now));
        assertThat(work.resolve("nope")).doesNotExist();
    }

    @Test
    void aFractionIsRenderedAsItsDeviceWithAnMpsShareAndAMemoryLimitAndMigAsAMigDeviceReference() {
        Allocation a = allocation("job-f");
        PlacedTask fraction = new PlacedTask("f", 0, "local", "L4", List.of(), 100, 64, List.of(), null,
                List.of(GpuShare.fraction(1, 250, 6_144)));
        PlacedTask mig = new PlacedTask("m", 0, "local", "A100", List.of(), 100, 64, List.of(), null,
                List.of(new GpuShare(0, 428, 40_960, "3g.40gb", 4)));

        Map<String, String> f = LocalBackend.environment(a, fraction, work, "/bin");
        Map<String, String> m = LocalBackend.environment(a, mig, work, "/bin");

        assertThat(f).containsEntry("CUDA_VISIBLE_DEVICES", "1").containsEntry("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25")
                .containsEntry("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=6144M").containsEntry("GANTRY_GPU_MEMORY_MIB", "6144")
                .doesNotContainKey("GANTRY_MIG_DEVICE");
        assertThat(m).containsEntry("CUDA_VISIBLE_DEVICES", "MIG-0/4/0").containsEntry("GANTRY_MIG_DEVICE", "0:3g.40gb:4")
                .containsEntry("GANTRY_GPU_MEMORY_MIB", "40960").doesNotContainKey("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
        assertThat(LocalBackend.environment(a, task("w", 0, 0, 1), work, "/bin"))
                .containsEntry("CUDA_VISIBLE_DEVICES", "0,1").doesNotContainKey("GANTRY_GPU_MEMORY_MIB")
                .doesNotContainKey("NCCL_IB_HCA");
        PlacedTask unknownMemory = new PlacedTask("u", 0, "local", "generic", List.of(), 100, 64, List.of(), null,
                List.of(GpuShare.fraction(0, 500, 0)));
        assertThat(LocalBackend.environment(a, unknownMemory, work, "/bin")).as("no limit of 0 MiB")
                .containsEntry("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50")
                .doesNotContainKeys("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "GANTRY_GPU_MEMORY_MIB");
    }

    @Test
    void aTaskIsToldTheRdmaNicsClosestToItsGpus() {
        PlacedTask p = task("w", 0, 0, 1).withRdmaNics(List.of("mlx5_0", "mlx5_1"));

        assertThat(LocalBackend.environment(allocation("job-nic", p), p, work, "/bin"))
                .containsEntry("NCCL_IB_HCA", "mlx5_0,mlx5_1");
    }

    @Test
    void aTaskIsToldItsCpuSetAndIsPinnedToItWithTasksetOnlyWhenPinningIsOn() {
        PlacedTask p = new PlacedTask("w", 0, "local", "L4", List.of(0), 4000, 64, List.of(3, 0, 1, 2, 8, 9, 11),
                null);

        assertThat(LocalBackend.environment(allocation("job-cpu", p), p, work, "/bin"))
                .containsEntry("GANTRY_CPU_SET", "0-3,8-9,11");
        assertThat(LocalBackend.cpuList(List.of(5))).isEqualTo("5");
        LocalBackend pinning = new LocalBackend(node(), work, null, java.time.Clock.systemUTC(), true);
        assertThat(pinning.pin(List.of("python", "train.py"), p.cpuSet()))
                .containsExactly("taskset", "-c", "0-3,8-9,11", "python", "train.py");
        assertThat(pinning.pin(List.of("python"), List.of())).containsExactly("python");
        assertThat(new LocalBackend(node(), work, null, java.time.Clock.systemUTC()).pin(List.of("python"),
                p.cpuSet())).as("pinning is off by default").containsExactly("python");
    }
}
