package io.gantry.queue.http;

import io.swagger.v3.oas.annotations.OpenAPIDefinition;
import io.swagger.v3.oas.annotations.enums.SecuritySchemeType;
import io.swagger.v3.oas.annotations.info.Info;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.security.SecurityScheme;

/**
 * The OpenAPI document's header. The document is generated at compile time from the controllers into
 * META-INF/swagger and served at {@code /swagger/gantry-queue-0.1.yml}, with Swagger UI at {@code /swagger-ui}.
 */
@OpenAPIDefinition(info = @Info(title = "gantry-queue", version = "0.1",
        description = "Queues: quotas, shares and what waits and why; the queue configuration (admin)."),
        security = @SecurityRequirement(name = "token"))
@SecurityScheme(name = "token", type = SecuritySchemeType.HTTP, scheme = "bearer",
        description = "An API token from the tokens file (gantry.auth.tokens-file)")
final class ApiDocs {
    private ApiDocs() {
    }
}
