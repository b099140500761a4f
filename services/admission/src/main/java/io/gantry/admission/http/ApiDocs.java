package io.gantry.admission.http;

import io.swagger.v3.oas.annotations.OpenAPIDefinition;
import io.swagger.v3.oas.annotations.enums.SecuritySchemeType;
import io.swagger.v3.oas.annotations.info.Info;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.security.SecurityScheme;

/**
 * The OpenAPI document's header. The document is generated at compile time from the controllers into
 * META-INF/swagger and served at {@code /swagger/gantry-admission-0.1.yml}, with Swagger UI at {@code /swagger-ui}.
 */
@OpenAPIDefinition(info = @Info(title = "gantry-admission", version = "0.1",
        description = "Jobs: submit, list, read and cancel them; the checkpoints their runs report; tenants and "
                + "API tokens (admin)."),
        security = @SecurityRequirement(name = "token"))
@SecurityScheme(name = "token", type = SecuritySchemeType.HTTP, scheme = "bearer",
        description = "An API token issued through /v1/admin (or from the bootstrap tokens file, "
                + "gantry.auth.tokens-file)")
final class ApiDocs {
    private ApiDocs() {
    }
}
