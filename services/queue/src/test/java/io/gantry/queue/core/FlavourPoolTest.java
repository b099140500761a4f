package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The queue's flavour -> pool map: where a job goes, and which flavours a job naming a pool is charged on. */
class FlavourPoolTest {
    /** H100 lives in the Kubernetes pool, A100 in the Slurm one; quota on both. */
    private static QueueDriver twoPools() {
        return QueueDriver.with(aConfig().flavours("H100", "A100")
                .queue(aQueue("a").quota("H100", 8).quota("A100", 8)).build()
                .withFlavourPools(Map.of("H100", "k8s", "A100", "slurm")));
    }

    private static QueueFact.JobDispatched dispatched(QueueDriver q, String job) {
        return q.all(QueueFact.JobDispatched.class, job).get(0);
    }

    @Test
    void aJobNamingNoPoolGoesToThePoolOfTheFlavourItIsAdmittedOn() {
        QueueDriver q = twoPools().submit(aJob("j").gpus(2));
        assertThat(dispatched(q, "j").flavour()).isEqualTo("H100");
        assertThat(dispatched(q, "j").pool()).isEqualTo("k8s");
    }

    @Test
    void aJobNamingAPoolIsAdmittedOnlyOnThatPoolsFlavours() {
        QueueDriver q = twoPools().submit(aJob("s").gpus(2).pool("slurm"));
        assertThat(dispatched(q, "s").flavour()).as("not H100, the first flavour").isEqualTo("A100");
        assertThat(dispatched(q, "s").pool()).isEqualTo("slurm");
        assertThat(q.core.state().usage().get("a")).as("H100, A100").startsWith(0L, 2000L);
    }

    @Test
    void aJobNamingAPoolWithoutFlavoursOfTheQueueNeverFitsSayingWhy() {
        QueueDriver q = twoPools().submit(aJob("t").gpus(1).pool("tpu"));
        assertThat(q.dispatchCount("t")).isZero();
        assertThat(q.lastWait("t").reason()).isEqualTo(WaitReason.NEVER_FITS);
        assertThat(q.lastWait("t").message()).contains("pool tpu", "queue a", "H100, A100");
    }

    @Test
    void withoutAMapTheQueueChoosesNoPoolAndAJobsOwnPoolIsPassedOn() {
        QueueDriver q = QueueDriver.with(aConfig().flavours("H100").queue(aQueue("a").quota("H100", 8)).build());
        q.submit(aJob("d").gpus(1), aJob("p").gpus(1).pool("gpu"));
        assertThat(dispatched(q, "d").pool()).as("placement's default").isNull();
        assertThat(dispatched(q, "p").pool()).isEqualTo("gpu");
    }

    @Test
    void theMapIsReadValidatedAndWrittenBack() {
        FairShareConfig c = FairShareConfig.fromYaml(yaml("""
                flavours: [H100, A100]
                pools: {H100: k8s}
                queues: [{name: a, tenant: a, quotas: {H100: {nominal: 8}, A100: {nominal: 8}}}]
                """));
        assertThat(c.flavourPools()).containsExactly(Map.entry("H100", "k8s"));
        assertThat(FairShareConfig.fromYaml(c.toDocument()).flavourPools())
                .isEqualTo(c.flavourPools());
        assertThatThrownBy(() -> FairShareConfig.fromYaml(yaml("""
                flavours: [H100]
                pools: {T4: k8s, H100: "Not A Name"}
                queues: [{name: a, tenant: a, quotas: {H100: {nominal: 8}}}]
                """))).isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).anySatisfy(
                        p -> assertThat(p).startsWith("pools.T4")).anySatisfy(p -> assertThat(p).startsWith("pools.H100")));
    }

    private static Object yaml(String text) {
        return new org.yaml.snakeyaml.Yaml(new org.yaml.snakeyaml.constructor.SafeConstructor(
                new org.yaml.snakeyaml.LoaderOptions())).load(text);
    }
}
