package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.api.ApiError;

/** Where a job stands in its queue ({@code GET /v1/queues/{name}/pending}), or nothing when it is not pending. */
record QueuePosition(int position, int pending, JsonNode list) {

    static QueuePosition of(ApiClient client, JsonNode job) {
        String queue = JobText.queue(job);
        if (queue == null || JobText.terminal(job) || "RUNNING".equals(JobText.state(job))) {
            return null;
        }
        JsonNode answer;
        try {
            answer = client.get(ApiClient.Service.QUEUE, "/v1/queues/" + ApiClient.encode(queue) + "/pending");
        } catch (ApiError e) {
            // the queue's view is an extra; the job's own state is still shown
            return null;
        }
        JsonNode pending = answer.path("pending");
        String id = job.path("jobId").asText();
        for (int i = 0; i < pending.size(); i++) {
            if (id.equals(pending.get(i).path("jobId").asText())) {
                return new QueuePosition(i + 1, pending.size(), pending);
            }
        }
        return null;
    }
}
