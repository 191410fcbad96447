"""Kinds of tool a software project names, and the tools of each kind: what a fact about a
project most often changes ("the CI moved", "the test runner changed"). ``rivals(new, old)``:
the two texts name different tools of one kind ("Builds use ESP-IDF 5.1 with CMake" and "The
firmware is built with the Arduino IDE"; "Opsgenie handles paging" and "Alerts page the
on-call via PagerDuty") — an update, not two neighbouring facts that each name a number.
General knowledge of the field, written for any project, not fitted to any set of notes."""

from __future__ import annotations

import functools
import re

from local_mcp_memory.application.suggestions import READ_CHARS

KINDS: dict[str, str] = {
    "language": "Python|Java|Kotlin|Swift|Objective-C|Go|Golang|Rust|Ruby|PHP|JavaScript|TypeScript|C#|C++|Scala|Elixir|Erlang|Haskell|Clojure|Dart|Lua|Perl|Julia|OCaml|F#|Groovy|Visual Basic|COBOL|Fortran|Zig|Nim|Crystal",
    "backend framework": "Django|Flask|FastAPI|Rails|Ruby on Rails|Sinatra|Express|Koa|NestJS|Fastify|Spring|Spring Boot|Laravel|Symfony|Phoenix|Gin|ASP.NET|ASP.NET Core|Actix|Axum|Hapi|Tornado|Pyramid|Starlette|Quarkus|Micronaut|Ktor|Play Framework|Litestar|Sanic|aiohttp",
    "frontend framework": "React|Vue|Vue.js|Angular|AngularJS|Svelte|Ember|Ember.js|Backbone|Backbone.js|jQuery|SolidJS|Preact|Next.js|Nuxt|Remix|Gatsby|Astro|SvelteKit|Alpine.js|Qwik|htmx|Blazor",
    "mobile framework": "React Native|Flutter|Xamarin|Ionic|Cordova|PhoneGap|SwiftUI|UIKit|Jetpack Compose|Kotlin Multiplatform|NativeScript|Capacitor|Expo|.NET MAUI",
    "desktop framework": "Electron|Tauri|Qt|GTK|WPF|WinForms|Cocoa|AppKit|JavaFX|Swing|wxWidgets|Tkinter",
    "test runner": "pytest|nose|nose2|unittest|Jest|Mocha|Jasmine|Vitest|AVA|Karma|RSpec|Minitest|JUnit|JUnit 5|TestNG|PHPUnit|xUnit|NUnit|MSTest|Pest|QUnit|Cucumber|Behave|Spock|Kotest|ScalaTest|ExUnit|Catch2|GoogleTest|doctest",
    "browser testing": "Cypress|Playwright|Selenium|Puppeteer|WebdriverIO|TestCafe|Nightwatch|Protractor|Detox|Espresso|XCTest|XCUITest|Appium|Maestro|EarlGrey|Robolectric",
    "continuous integration": "Jenkins|GitHub Actions|GitLab CI|CircleCI|Travis|Travis CI|Buildkite|TeamCity|Bamboo|Azure Pipelines|Drone CI|Bitbucket Pipelines|Tekton|Concourse|CodeBuild|AWS CodePipeline|Bitrise|Codemagic|AppVeyor|Woodpecker|Argo CD|Flux|Spinnaker|Octopus Deploy|Xcode Cloud",
    "hosting": "Heroku|AWS|Amazon Web Services|GCP|Google Cloud|Azure|DigitalOcean|Linode|Akamai Cloud|Vercel|Netlify|Fly.io|Cloudflare Pages|Cloudflare Workers|App Engine|Azure App Service|App Service|Elastic Beanstalk|AWS Lambda|Lambda|Cloud Run|Cloud Functions|Azure Functions|EC2|ECS|Fargate|EKS|GKE|AKS|Kubernetes|Nomad|OpenShift|Hetzner|OVH|Vultr|Scaleway|Firebase Hosting|GitHub Pages|GitLab Pages|Amplify|Lightsail|Docker Swarm|bare metal",
    "database": "PostgreSQL|Postgres|MySQL|MariaDB|SQLite|Oracle|SQL Server|MSSQL|MongoDB|DynamoDB|Cassandra|CockroachDB|CouchDB|Couchbase|Firestore|Realtime Database|Aurora|Cloud SQL|Spanner|Neo4j|Supabase|PlanetScale|ScyllaDB|RDS|Cosmos DB|Azure SQL|TiDB|YugabyteDB|Core Data|IndexedDB|FoundationDB|RethinkDB|TimescaleDB|InfluxDB|LevelDB|RocksDB",
    "cache": "Redis|Memcached|Valkey|KeyDB|Hazelcast|ElastiCache|Varnish|Dragonfly",
    "message queue": "Kafka|Apache Kafka|RabbitMQ|SQS|Amazon SQS|SNS|Pub/Sub|Google Pub/Sub|Kinesis|NATS|ActiveMQ|Pulsar|ZeroMQ|Celery|Sidekiq|Resque|BullMQ|RQ|Azure Service Bus|Event Hubs|EventBridge|Redpanda|Amazon MQ|Beanstalkd|Huey|Dramatiq",
    "data warehouse": "Redshift|Amazon Redshift|Snowflake|BigQuery|Databricks|Synapse|Azure Synapse|ClickHouse|Druid|Teradata|Vertica|Athena|Presto|Trino|DuckDB|Greenplum|Firebolt|Pinot|StarRocks|Exasol",
    "orchestration": "Airflow|Apache Airflow|cron|crontab|Dagster|Prefect|Luigi|Oozie|Argo Workflows|Step Functions|MWAA|Cloud Composer|Temporal|Azkaban|Kestra|Rundeck|systemd timers|Control-M|Windows Task Scheduler",
    "data format": "Parquet|CSV|JSON|JSON lines|JSONL|NDJSON|Avro|ORC|Protobuf|Protocol Buffers|XML|YAML|TOML|Delta Lake|Iceberg|Apache Iceberg|Hudi|MessagePack|Feather|HDF5|NetCDF|Zarr|Excel|TSV",
    "email delivery": "Mailgun|SendGrid|SES|Amazon SES|Postmark|Mailchimp|Mandrill|SparkPost|Mailjet|Resend|Brevo|Sendinblue|Customer.io|Mailtrap|SMTP2GO",
    "messaging delivery": "Twilio|OneSignal|Firebase Cloud Messaging|FCM|APNs|Pusher|Vonage|Nexmo|MessageBird|Plivo|Airship|Braze|Expo Push|Ably",
    "error tracking": "Sentry|Bugsnag|Rollbar|Crashlytics|Firebase Crashlytics|Instabug|Raygun|Airbrake|Honeybadger|HockeyApp crash reports|App Center Diagnostics|TrackJS|LogRocket",
    "monitoring": "Datadog|New Relic|Prometheus|Grafana|Honeycomb|Dynatrace|AppDynamics|Splunk|ELK|Elastic Stack|Kibana|Logstash|Loki|CloudWatch|Stackdriver|Cloud Monitoring|Nagios|Zabbix|Icinga|Graphite|StatsD|Munin|Checkmk|Uptime Kuma|Pingdom|Better Stack|Papertrail|Loggly|Sumo Logic|Graylog|Fluentd|Fluent Bit|VictoriaMetrics|Thanos|Mimir|Netdata",
    "paging": "PagerDuty|Opsgenie|VictorOps|Splunk On-Call|incident.io|FireHydrant|xMatters|Rootly|Squadcast|Grafana OnCall|Zenduty",
    "tracing": "Jaeger|Zipkin|Tempo|Grafana Tempo|OpenTelemetry|X-Ray|AWS X-Ray|Lightstep|Cloud Trace|SkyWalking|Elastic APM",
    "issue tracker": "Jira|Linear|GitHub Issues|GitLab Issues|Trello|Asana|YouTrack|Clubhouse|Monday.com|Basecamp|Redmine|Bugzilla|Pivotal Tracker|Azure Boards|ClickUp|Wrike|Targetprocess|Taiga|Phabricator",
    "chat": "Slack|Microsoft Teams|Discord|Mattermost|Zulip|Rocket.Chat|HipChat|IRC|Google Chat|Telegram|WhatsApp",
    "documentation site": "Confluence|Notion|Google Docs|SharePoint|Docusaurus|MkDocs|Material for MkDocs|Sphinx|Jekyll|Hugo|GitBook|Read the Docs|ReadTheDocs|VuePress|VitePress|Mintlify|ReadMe|Docsify|Redoc|Swagger UI|Stoplight|Nextra|Starlight|Antora|Doxygen|JSDoc|Javadoc|Storybook|MediaWiki|DokuWiki|Dropbox Paper|Quip|Obsidian|Bookstack",
    "build tool": "npm|Yarn|pnpm|pip|Poetry|Pipenv|conda|Conda|uv|PDM|setuptools|setup.py|Maven|Gradle|sbt|Bazel|CMake|Meson|Ninja|Cargo|Bundler|Composer|CocoaPods|Carthage|Swift Package Manager|SPM|Webpack|webpack|Vite|Rollup|Parcel|esbuild|Gulp|Grunt|Turbopack|Turborepo|Nx|Lerna|Rush|Browserify|SWC|Babel|Leiningen|Rebar3|Cabal|vcpkg|Conan|Nix|Homebrew|MSBuild|NuGet|Xcode|Arduino IDE|PlatformIO|ESP-IDF|Keil|IAR|STM32CubeIDE|Zephyr|Yocto|Buildroot",
    "version control": "GitHub|GitLab|Bitbucket|Gitea|Azure DevOps|Azure Repos|SourceHut|SVN|Subversion|Mercurial|Perforce|Git|CVS|Gerrit|Forgejo|Codeberg|AWS CodeCommit|Plastic SCM|Fossil",
    "containers and provisioning": "Docker|Podman|Vagrant|Terraform|OpenTofu|Pulumi|CloudFormation|Ansible|Chef|Puppet|SaltStack|AWS CDK|CDK|Helm|Kustomize|Packer|Bicep|ARM templates|Crossplane|Docker Compose|LXC|containerd|CRI-O",
    "authentication": "Auth0|Okta|Cognito|Amazon Cognito|Keycloak|Firebase Auth|Firebase Authentication|Clerk|Ory|Azure AD|Azure Active Directory|Entra ID|OneLogin|Ping Identity|SuperTokens|Authelia|FusionAuth|Stytch|Passport.js|NextAuth|Devise|LDAP|Active Directory|SAML|OAuth|OpenID Connect|magic links|passkeys|WebAuthn|email and password|passwords",
    "payments": "Stripe|Braintree|PayPal|Adyen|Square|Chargebee|Recurly|Paddle|Klarna|Mollie|Checkout.com|Razorpay|Authorize.net|Worldpay|Lemon Squeezy|RevenueCat|Google Play Billing|StoreKit|Apple Pay|Google Pay|GoCardless|Plaid|Zuora",
    "product analytics": "Google Analytics|GA4|Universal Analytics|Mixpanel|Amplitude|Segment|Heap|Plausible|Matomo|Piwik|PostHog|Fathom|Snowplow|Adobe Analytics|Hotjar|FullStory|Pendo|Umami|Firebase Analytics|Countly|Rudderstack|Simple Analytics|Clicky|Chartbeat|Parse.ly",
    "feature flags": "LaunchDarkly|Unleash|Flagsmith|Optimizely|GrowthBook|ConfigCat|Statsig|Flipper|Firebase Remote Config|Split.io|Harness Feature Flags|DevCycle|Flagd",
    "search engine": "Elasticsearch|OpenSearch|Algolia|Solr|Apache Solr|Meilisearch|Typesense|Vespa|Coveo|Azure Cognitive Search|Lucene|Tantivy|Quickwit|Sphinx search",
    "object storage": "S3|Amazon S3|GCS|Google Cloud Storage|Azure Blob Storage|Blob Storage|MinIO|Backblaze|B2|Cloudflare R2|R2|HDFS|Ceph|Wasabi|NFS|SharePoint|Dropbox|Google Drive|OneDrive|shared drive",
    "cdn and proxy": "Cloudflare|Fastly|Akamai|CloudFront|Azure Front Door|Front Door|Nginx|nginx|HAProxy|Traefik|Envoy|Caddy|Apache httpd|Varnish|Kong|Istio|Linkerd|Azure CDN|Cloud CDN|BunnyCDN|KeyCDN|Application Gateway|ALB|ELB|Ingress-NGINX|Tyk|Apigee|API Gateway",
    "secrets": "Vault|HashiCorp Vault|AWS Secrets Manager|Secrets Manager|1Password|Doppler|SOPS|Key Vault|Azure Key Vault|Parameter Store|SSM Parameter Store|Secret Manager|Google Secret Manager|Infisical|Bitwarden|LastPass|KeePass|git-crypt|sealed-secrets|Sealed Secrets|Conjur|CyberArk|.env files|dotenv",
    "experiment tracking": "MLflow|Weights & Biases|W&B|wandb|Neptune|Comet ML|TensorBoard|ClearML|DVC|Polyaxon|Vertex AI Experiments|SageMaker Experiments|Google Sheet|spreadsheet|Excel sheet",
    "ml framework": "PyTorch|TensorFlow|Keras|JAX|scikit-learn|sklearn|XGBoost|LightGBM|CatBoost|Hugging Face Transformers|Transformers|fastai|MXNet|Caffe|Theano|ONNX Runtime|TensorRT|Core ML|TensorFlow Lite|TFLite|PaddlePaddle|spaCy|NLTK|statsmodels|Prophet|OpenCV",
    "model serving": "FastAPI|TorchServe|TensorFlow Serving|Triton|Triton Inference Server|BentoML|Seldon|KServe|SageMaker|Vertex AI|Ray Serve|MLServer|Azure ML|Flask",
    "feature store": "Feast|Tecton|Hopsworks|SageMaker Feature Store|Vertex AI Feature Store|Featureform|Databricks Feature Store",
    "data quality": "Great Expectations|Soda Core|Deequ|dbt tests|Monte Carlo|Anomalo|Bigeye|Elementary|Pandera|Datafold",
    "data processing": "pandas|Pandas|Polars|Spark|Apache Spark|PySpark|Dask|Apache Beam|Flink|Apache Flink|dbt|Dataflow|EMR|AWS Glue|Hadoop|MapReduce|Hive|Samza|Kafka Streams|Materialize|Fivetran|Airbyte|Stitch|Meltano|Talend|Informatica|SSIS|NiFi|Logstash",
    "beta distribution": "HockeyApp|TestFlight|Firebase App Distribution|App Center|Visual Studio App Center|TestFairy|Diawi|Google Play internal testing|Play Console internal testing|Fabric Beta|Crashlytics Beta",
    "state management": "Redux|Redux Toolkit|MobX|ReSwift|Recoil|Zustand|Vuex|Pinia|NgRx|Bloc|Riverpod|Jotai|XState|The Composable Architecture|TCA|Valtio|Context API|GetX|RxSwift|RxJava",
    "orm": "SQLAlchemy|Django ORM|Prisma|TypeORM|Sequelize|Hibernate|JPA|Active Record|ActiveRecord|Entity Framework|EF Core|GORM|Diesel|Knex|Drizzle|Peewee|Doctrine|Eloquent|MikroORM|Objection.js|Ecto|jOOQ|MyBatis|Dapper|SQLModel|Tortoise ORM|Exposed|sqlc",
    "http client": "httpx|aiohttp|axios|Axios|OkHttp|Retrofit|Alamofire|urllib3|urllib|Ktor client|Guzzle|Faraday|HTTParty|superagent|node-fetch|undici|RestSharp|Apollo Client|URLSession|Volley",
    "api style": "REST|GraphQL|gRPC|SOAP|JSON-RPC|tRPC|WebSockets|WebSocket|Server-Sent Events|SSE|long polling|polling|webhooks|Thrift|OData|XML-RPC|MQTT|AMQP|CoAP",
    "linter and formatter": "ESLint|Prettier|TSLint|JSHint|Biome|Black|black|Ruff|ruff|Flake8|flake8|Pylint|pylint|isort|autopep8|YAPF|Rubocop|RuboCop|StandardRB|golangci-lint|gofmt|rustfmt|Clippy|clang-format|clang-tidy|ktlint|detekt|SwiftLint|SwiftFormat|Checkstyle|Spotless|PMD|SpotBugs|Stylelint|mypy|Pyright|pyright|Sorbet|PHPStan|Psalm|PHP_CodeSniffer|ShellCheck|hadolint|SonarQube|SonarCloud|Codacy|Code Climate|DeepSource",
    "css styling": "Tailwind|Tailwind CSS|Bootstrap|Sass|SCSS|Less|Stylus|CSS Modules|styled-components|Emotion|Material UI|MUI|Chakra UI|Ant Design|Bulma|Foundation|PostCSS|vanilla-extract|UnoCSS|Radix|shadcn/ui|Mantine|Vuetify|Quasar|Semantic UI",
    "game engine": "Unity|Unreal|Unreal Engine|Godot|GameMaker|Cocos2d|Cocos Creator|Phaser|Defold|Bevy|MonoGame|LibGDX|RPG Maker|CryEngine|Love2D|PICO-8|Pygame|SpriteKit|SceneKit|three.js|Babylon.js|PlayCanvas",
    "design tool": "Figma|Sketch|Adobe XD|InVision|Zeplin|Framer|Balsamiq|Axure|Photoshop|Illustrator|Affinity Designer|Penpot|Canva|Miro|Whimsical|Lucidchart|draw.io|Excalidraw|Tiled|Aseprite|Blender|Maya|3ds Max|Substance Painter",
    "microcontroller": "ATmega328P|ATmega2560|ESP32|ESP32-S3|ESP32-C3|ESP8266|STM32|STM32F4|nRF52|nRF52840|RP2040|Raspberry Pi Pico|Arduino Uno|Arduino Nano|Teensy|SAMD21|PIC|MSP430|Raspberry Pi|Raspberry Pi 4|Raspberry Pi 5|Jetson|Jetson Nano|Jetson Orin|Jetson Orin Nano|BeagleBone|Intel NUC",
    "operating system": "Ubuntu|Debian|CentOS|RHEL|Red Hat Enterprise Linux|Fedora|Alpine|Amazon Linux|Rocky Linux|AlmaLinux|SUSE|openSUSE|Windows Server|Windows|macOS|FreeBSD|OpenBSD|Bottlerocket|Flatcar|Talos|CoreOS|Container-Optimized OS|Distroless|FreeRTOS|Zephyr RTOS|Linux|iOS|Android|watchOS|Wear OS|tvOS|iPadOS|ChromeOS|HarmonyOS|Tizen",
    "license": "MIT|Apache-2.0|Apache 2.0|Apache License 2.0|GPL|GPL-2.0|GPL-3.0|GPLv2|GPLv3|LGPL|LGPL-3.0|AGPL|AGPL-3.0|BSD|BSD-2-Clause|BSD-3-Clause|MPL|MPL-2.0|ISC|Unlicense|CC0|CC-BY|CC BY 4.0|CC BY-SA|EPL|EUPL|BSL|Business Source License|SSPL|Elastic License|Zlib|proprietary",
    "web server runtime": "Gunicorn|uWSGI|Uvicorn|Hypercorn|Daphne|Waitress|Puma|Unicorn|Passenger|Thin|Tomcat|Jetty|Undertow|WildFly|JBoss|WebLogic|WebSphere|IIS|Kestrel|Node.js|Deno|PM2|Supervisor|systemd|mod_wsgi|PHP-FPM|FrankenPHP|RoadRunner|Netty",
    "support desk": "Zendesk|Freshdesk|Intercom|Help Scout|Jira Service Management|ServiceNow|Crisp|Drift|Gorgias|HubSpot Service Hub|Kayako|Zoho Desk|osTicket|Freshservice|Salesforce Service Cloud",
    "crm": "Salesforce|HubSpot|Pipedrive|Zoho CRM|Dynamics 365|Microsoft Dynamics|Insightly|SugarCRM|Freshsales",
    "localization": "Crowdin|Lokalise|Transifex|POEditor|Weblate|Smartling|Localazy|Tolgee|gettext|i18next|react-intl|FormatJS|ICU MessageFormat|Pontoon|Pootle|Google Translate|DeepL",
    "video and calls": "Zoom|Google Meet|Microsoft Teams meetings|Jitsi|Whereby|GoToMeeting|BlueJeans|Skype",
    "scheduling and hr": "Greenhouse|Lever|Workable|Ashby|BambooHR|Workday|Personio|Rippling|Gusto|Deel|Calendly|Cal.com|Google Calendar|Outlook",
    "robotics": "ROS|ROS 1|ROS 2|ROS Noetic|ROS Melodic|ROS Humble|ROS Foxy|Gazebo|Webots|MoveIt|Isaac Sim|CoppeliaSim|V-REP|PX4|ArduPilot|MAVLink|MAVROS|Nav2|micro-ROS",
    "vcs workflow": "trunk-based development|GitFlow|Git Flow|GitHub Flow|release branches|feature branches|squash merges|rebase merges|merge commits|monorepo|polyrepo|stacked diffs",
}
"""Per kind, its tools: a name as it is written, "|" between names."""

ORDINARY = frozenset(
    """
    amplify angular asana astro athena aurora backbone bamboo basecamp behave blender bloc
    bootstrap capacitor cargo celery chef composer concourse cordova crisp crystal cucumber
    cypress dart detox diesel discord drift drizzle druid electron ember emotion espresso excel
    expo exposed express fathom feast feather flask flutter flux foundation framer gatsby gin go
    gusto heap hive hugo iceberg intercom ionic jekyll jest karma lambda less lever linear luigi
    maestro maven maya neptune ninja nomad notion obsidian oracle packer paddle pandas passenger
    pest phoenix playwright poetry polars postmark prefect presto protractor pulsar puma puppet
    pusher pyramid radix rails react remix ruby rust segment selenium sentry sketch slack
    spanner spark sphinx spring square supervisor svelte swift swing tempo temporal thin tiled
    tornado unicorn unity vault volley waitress windows woodpecker yarn zoom
    """.split()
)
"""Tools whose name is also an ordinary word ("React", "Linear", "Go", "Vault"): matched only as
the name is written; any other tool matches in any case ("postgres", "pytest")."""


def _entries() -> dict[str, tuple[str, frozenset[str]]]:
    """Per tool name in lower case: the name as written, and its kinds (a name may be of
    several: Flask serves web pages and models)."""
    kinds: dict[str, set[str]] = {}
    written: dict[str, str] = {}
    for kind, names in KINDS.items():
        for name in names.split("|"):
            kinds.setdefault(name.lower(), set()).add(kind)
            written.setdefault(name.lower(), name)
    return {key: (written[key], frozenset(found)) for key, found in kinds.items()}


_ENTRIES = _entries()
_LONGEST = max(len(key.split()) for key in _ENTRIES)
_TOKEN = re.compile(r"[A-Za-z0-9][\w.+#/&'-]*[\w+#]|[A-Za-z0-9]")


def tools(text: str) -> dict[str, frozenset[str]]:
    """The tools ``text`` names (its first ``READ_CHARS``), by kind: per kind, the names in
    lower case. The longest name at each word wins ("Amazon Redshift", not "Amazon")."""
    return _tools_of_head(text[:READ_CHARS])


@functools.lru_cache(maxsize=8192)
def _tools_of_head(text: str) -> dict[str, frozenset[str]]:
    """Kept for the next searches, whose windows mostly hold the same notes; keyed by at most
    ``READ_CHARS`` characters, so the cache stays small whatever the notes' size."""
    words = [match.group().rstrip(".'") for match in _TOKEN.finditer(text)]
    found: dict[str, set[str]] = {}
    for start in range(len(words)):
        for length in range(min(_LONGEST, len(words) - start), 0, -1):
            phrase = " ".join(words[start : start + length])
            entry = _ENTRIES.get(phrase.lower())
            if entry is None or (phrase.lower() in ORDINARY and phrase != entry[0]):
                continue
            for kind in entry[1]:
                found.setdefault(kind, set()).add(phrase.lower())
            break
    return {kind: frozenset(names) for kind, names in found.items()}


def rivals(new: str, old: str) -> bool:
    """Whether ``new`` and ``old`` name different tools of one kind: each names a tool of
    that kind that the other does not name at all ("pytest" and "nose": test runners;
    "Snowflake" and "Amazon Redshift": warehouses). A note naming both ("moved from nose to
    pytest") is no rival of one naming nose alone: the other names nothing new."""
    newer, older = tools(new), tools(old)
    if not newer.keys() & older.keys():
        return False
    new_names = frozenset().union(*newer.values())
    old_names = frozenset().union(*older.values())
    return any(newer[kind] - old_names and older[kind] - new_names for kind in newer.keys() & older.keys())
