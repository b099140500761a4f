package io.gantry.simulator;

import org.junit.jupiter.api.Test;

import java.time.LocalDateTime;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TracesTest {
    private static final List<String> PHILLY = List.of(
            "timestamp,duration,num_gpus,gpu_time,cluster",
            "2017-10-09 07:01:55,66.0,1,66.0,11cb48",
            "2017-10-09 06:13:03,2951.0,1,2951.0,6214e9",
            "2017-10-09 06:13:03,10.5,16,168.0,ee9e8c",
            "2017-10-09 08:00:00,100.0,2,200.0,6214e9");
    private static final List<String> VC = List.of("vc,node num", "6214e9,64", "ee9e8c,16");

    @Test
    void philly_jobs_are_sorted_by_submit_time_relative_to_the_first_with_tenant_from_the_cluster_column() {
        Workload w = Traces.philly(PHILLY, VC, Traces.Options.ALL);

        assertThat(w.jobs()).extracting(SimJob::id).containsExactly("philly-3", "philly-4", "philly-2", "philly-5");
        assertThat(w.jobs().get(0)).isEqualTo(new SimJob("philly-3", "6214e9", 1, 0, 2_951_000));
        assertThat(w.jobs().get(1)).isEqualTo(new SimJob("philly-4", "ee9e8c", 16, 0, 10_500));
        assertThat(w.jobs().get(2).submitMillis()).isEqualTo((48 * 60 + 52) * 1000L);
    }

    @Test
    void philly_weights_come_from_the_vc_node_counts_and_unlisted_vcs_get_the_smallest() {
        Workload w = Traces.philly(PHILLY, VC, Traces.Options.ALL);

        assertThat(w.tenantWeights()).containsEntry("6214e9", 64.0).containsEntry("ee9e8c", 16.0)
                .containsEntry("11cb48", 16.0);
    }

    @Test
    void philly_window_max_jobs_and_compression_select_and_scale_the_arrivals() {
        Workload w = Traces.philly(PHILLY, VC,
                new Traces.Options(2, LocalDateTime.of(2017, 10, 9, 7, 0, 0), 10.0));

        assertThat(w.jobs()).extracting(SimJob::id).containsExactly("philly-2", "philly-5");
        assertThat(w.jobs().get(1).submitMillis()).isEqualTo(Math.round((58 * 60 + 5) * 100.0));
    }

    @Test
    void a_malformed_philly_line_is_rejected_with_its_line_number() {
        assertThatThrownBy(() -> Traces.philly(List.of("timestamp,duration,num_gpus,gpu_time,cluster",
                "2017-10-09 07:01:55,abc,1,66.0,11cb48"), VC, Traces.Options.ALL))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line 2");
    }

    @Test
    void tiresias_jobs_belong_to_one_tenant_with_their_gpus_submit_and_duration() {
        Workload w = Traces.tiresias(List.of("job_id,num_gpu,submit_time,iterations,model_name,duration,interval",
                "1,8,30,133,vgg11,147,23", "0,1,0,606,vgg19,164,30"), Traces.Options.ALL);

        assertThat(w.jobs()).containsExactly(new SimJob("tiresias-0", "tiresias", 1, 0, 164_000),
                new SimJob("tiresias-1", "tiresias", 8, 30_000, 147_000));
    }

    @Test
    void the_kueue_baseline_has_15000_jobs_of_the_three_shapes_over_30_tenants() {
        Workload w = Traces.kueueBaseline(30, 7, Integer.MAX_VALUE);

        assertThat(w.jobs()).hasSize(15_000);
        assertThat(w.tenantWeights()).hasSize(30);
        assertThat(w.jobs().stream().filter(j -> j.gpus() == 1 && j.durationMillis() == 200).count()).isEqualTo(10_500);
        assertThat(w.jobs().stream().filter(j -> j.gpus() == 5 && j.durationMillis() == 500).count()).isEqualTo(3_000);
        assertThat(w.jobs().stream().filter(j -> j.gpus() == 20 && j.durationMillis() == 1000).count()).isEqualTo(1_500);
        assertThat(Traces.kueueBaseline(30, 7, 100).jobs()).isEqualTo(w.jobs().subList(0, 100));
    }

    @Test
    void openb_pods_keep_their_share_models_cpu_memory_and_qos_tenant_in_creation_order() {
        Workload w = Traces.alibaba(List.of("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                        + "creation_time,deletion_time,scheduled_time",
                "b,6000,12288,1,460,V100M16|V100M32,BE,Running,20,120,25",
                "a,12000,16384,2,1000,,LS,Pending,10,40,"), Traces.Options.ALL);

        assertThat(w.jobs()).containsExactly(
                new SimJob("a", "ls", 2, 0, 30_000, null, 12000, 16384, List.of(), null),
                new SimJob("b", "be", 1, 10_000, 95_000, 460, 6000, 12288, List.of("V100M16", "V100M32"), null));
        assertThat(w.jobs().get(1).milliGpus()).isEqualTo(460);
        assertThat(w.tenantWeights()).containsOnlyKeys("ls", "be");
    }

    @Test
    void min_gpus_keeps_only_the_multi_gpu_jobs_and_their_tenants() {
        Workload w = new Workload("w", List.of(new SimJob("a", "x", 1, 0, 1), new SimJob("b", "y", 4, 5, 1)),
                java.util.Map.of("x", 1.0, "y", 2.0), "inline");

        Workload multi = Traces.atLeast(w, 2);

        assertThat(multi.jobs()).extracting(SimJob::id).containsExactly("b");
        assertThat(multi.tenantWeights()).containsOnlyKeys("y");
    }

    @Test
    void theGpuSpecVariantConstrainsAboutAThirdOfThePodsToInventoryModelsTheSameWayForTheSameSeed() {
        List<SimJob> pods = new java.util.ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            pods.add(new SimJob("p" + i, "LS", 1, i, 1000, i % 2 == 0 ? 500 : null, 1000, 1024, List.of(), null));
        }
        Workload w = new Workload("alibaba", pods, java.util.Map.of("LS", 1.0), "openb");

        Workload a = Traces.withGpuSpecs(w, 1.0 / 3, 7);
        long constrained = a.jobs().stream().filter(j -> !j.gpuModels().isEmpty()).count();

        assertThat(constrained).isBetween(900L, 1100L);
        assertThat(a.jobs()).flatExtracting(SimJob::gpuModels).allSatisfy(m -> assertThat(m)
                .isIn("G2", "G3", "T4", "P100", "V100M16", "V100M32"));
        assertThat(a.jobs()).extracting(SimJob::gpuMilli).isEqualTo(w.jobs().stream().map(SimJob::gpuMilli).toList());
        assertThat(Traces.withGpuSpecs(w, 1.0 / 3, 7).jobs()).isEqualTo(a.jobs());
        assertThat(Traces.withGpuSpecs(w, 1.0 / 3, 8).jobs()).isNotEqualTo(a.jobs());
        assertThat(a.name()).isEqualTo("alibaba-gpuspec");
        assertThat(a.note()).contains(constrained + " pods name the GPU models they accept");
    }
}
