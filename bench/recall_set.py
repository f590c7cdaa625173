"""memd's labelled recall set: 300 memories in 30 projects, 200 queries, three languages.

Each template is one memory as a person would save it (type, name,
description, Why/How body) and two questions a user would ask when that
memory is the answer, worded differently from the description. Every project
is a different service with a different person, so across all 300 memories a
query must find its own project's memory among 29 near-twins.

`build()` returns the projects (memory files per project) and the queries,
each labelled with the (project, relpath) it should recall.
"""

from __future__ import annotations

SERVICES = (
    "billing", "ingest", "search", "checkout", "auth", "notifications",
    "analytics", "inventory", "shipping", "payroll", "catalog", "chat", "media",
    "reporting", "pricing", "onboarding", "ledger", "scheduler", "gateway",
    "recommender", "crawler", "warehouse", "mobile", "kiosk", "telemetry",
    "forum", "booking", "fleet", "insurance", "tutoring",
)  # fmt: skip
PEOPLE = (
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hiro", "Ines",
    "Jonas", "Kiri", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa",
    "Sven", "Tomoko", "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zara", "Aiko",
    "Bram", "Chiara", "Dmitri",
)  # fmt: skip

# (type, name, description, (query, query))
EN = (
    ("feedback", "No mocks for the {svc} database",
     "{svc} integration tests run against a real Postgres container, never mocked "
     "repositories",
     ("can I fake the db layer in {svc} tests?",
      "should {svc} tests talk to an actual postgres")),
    ("project", "{svc} release freeze",
     "Merges to {svc} main stop on Thursday evenings until the Monday release cut",
     ("when am I not allowed to merge into {svc}?",
      "is there a code freeze for {svc} before releases")),
    ("reference", "{svc} on-call dashboard",
     "Grafana board svc-{svc}-latency shows p99 latency and the error budget",
     ("where can I see {svc} latency graphs", "which grafana board for {svc} errors")),
    ("user", "{who}'s background",
     "{who} is a backend engineer with ten years of Go, new to React front-ends",
     ("how experienced is {who} with frontend work?", "what languages does {who} know")),
    ("feedback", "Terse summaries for {who}",
     "{who} wants short answers without trailing recaps of what was changed",
     ("does {who} like long explanations at the end?",
      "how verbose should my replies to {who} be")),
    ("project", "{svc} cache migration",
     "{svc} moves from memcached to Redis by the end of Q1 for the session store",
     ("what's replacing memcached in {svc}", "redis rollout deadline for {svc}")),
    ("reference", "{svc} bug tracker",
     "Bugs for {svc} are filed in the Linear project, not in GitHub issues",
     ("where do I report a {svc} bug", "which tracker does {svc} use for tickets")),
    ("feedback", "Squash commits in {svc}",
     "Pull requests in {svc} are squash-merged with a conventional-commit title",
     ("how should I merge PRs for {svc}", "commit message style in {svc}")),
    ("project", "{svc} incident postmortem",
     "The {svc} outage on 4 Nov was caused by an expired TLS certificate on the "
     "load balancer",
     ("why did {svc} go down in november", "what broke {svc} during the last outage")),
    ("reference", "{svc} runbook",
     "The {svc} runbook for restarts and failover is in Notion under Ops",
     ("how do I restart {svc} safely", "failover instructions for {svc}")),
    ("feedback", "{svc} logging",
     "Use structured JSON logs in {svc}; print statements get rejected in review",
     ("can I use print for debugging output in {svc}",
      "what log format does {svc} want")),
    ("user", "{who}'s timezone",
     "{who} works from Lisbon and prefers meetings before 4pm UTC",
     ("what hours is {who} available", "where is {who} located")),
    ("project", "{svc} API versioning",
     "{svc} public API v1 is deprecated; all new endpoints go to v2 with cursor "
     "pagination",
     ("should new {svc} endpoints go in v1?", "how does the {svc} api paginate")),
    ("reference", "{svc} feature flags",
     "Feature flags for {svc} are managed in LaunchDarkly, environment prod",
     ("where are {svc} toggles configured",
      "how do I switch a {svc} feature on in production")),
    ("feedback", "Type hints in {svc}",
     "Every new Python function in {svc} needs full type annotations checked by "
     "mypy strict",
     ("do I have to annotate types in {svc} code", "is mypy enforced for {svc}")),
    ("project", "{svc} load test goal",
     "{svc} must sustain 5,000 requests per second under 200 ms p95 before launch",
     ("what throughput target does {svc} have",
      "performance requirement for the {svc} launch")),
    ("reference", "{svc} secrets",
     "{svc} credentials are stored in Vault under secret/{svc}/prod, never in env "
     "files",
     ("where are the {svc} passwords kept",
      "how do I get the production api key for {svc}")),
    ("feedback", "{svc} dependency policy",
     "Ask before adding a third-party package to {svc}; the team audits licenses",
     ("can I pull in a new library for {svc}", "rules about new dependencies in {svc}")),
    ("user", "{who}'s role",
     "{who} is the product manager for {svc} and decides feature priority",
     ("who owns the {svc} roadmap", "who should decide {svc} priorities")),
    ("project", "{svc} data retention",
     "{svc} must delete user events after 90 days to comply with the privacy review",
     ("how long can {svc} keep event data", "gdpr deletion rule for {svc}")),
)  # fmt: skip
ZH = (
    ("feedback", "{svc} 测试规范", "{svc} 的单元测试必须覆盖边界条件，覆盖率不低于百分之八十",
     ("{svc} 的测试覆盖率要求是多少", "{svc} 单测要达到多少覆盖")),
    ("project", "{svc} 上线计划", "{svc} 新版本计划在十二月中旬灰度发布，先开放给百分之五的用户",
     ("{svc} 什么时候发布新版", "{svc} 灰度比例是多少")),
    ("reference", "{svc} 监控告警", "{svc} 的告警规则配置在 Prometheus，值班通知走钉钉群",
     ("{svc} 报警会发到哪里", "{svc} 的监控在哪里配置")),
    ("user", "{who} 的偏好", "{who} 喜欢先看结论再看细节，回答要用中文",
     ("给 {who} 回复时用什么语言", "{who} 喜欢什么样的回答方式")),
    ("feedback", "{svc} 代码评审", "{svc} 的合并请求至少需要两位同事批准才能合入主分支",
     ("{svc} 合并需要几个人审批", "{svc} 的 PR 谁来审核")),
    ("project", "{svc} 数据库迁移", "{svc} 正在从 MySQL 迁移到 PostgreSQL，旧表下个月停止写入",
     ("{svc} 换成什么数据库了", "{svc} 的 MySQL 什么时候停用")),
    ("reference", "{svc} 接口文档", "{svc} 的接口文档放在内部 Swagger 站点，地址在团队 wiki 首页",
     ("{svc} 的 API 说明在哪里看", "去哪找 {svc} 的接口定义")),
    ("feedback", "{svc} 错误处理", "{svc} 中不要吞掉异常，所有错误都要记录日志并返回明确的错误码",
     ("{svc} 里出错了应该怎么处理", "{svc} 能不能忽略异常")),
    ("project", "{svc} 性能问题", "{svc} 首页加载慢是因为图片没有压缩，计划接入 CDN 解决",
     ("为什么 {svc} 首页这么慢", "{svc} 加载速度怎么优化")),
    ("user", "{who} 的职责", "{who} 负责 {svc} 的后端架构和容量规划",
     ("谁负责 {svc} 的架构设计", "{svc} 扩容找谁")),
)  # fmt: skip
JA = (
    ("feedback", "{svc} のコミット規約", "{svc} のコミットメッセージは英語で書き、チケット番号を先頭に付ける",
     ("{svc} のコミットメッセージは何語で書く", "{svc} でチケット番号はどこに入れる")),
    ("project", "{svc} のリリース日程", "{svc} の次期リリースは一月末を予定しており、年末は機能追加を凍結する",
     ("{svc} の次のリリースはいつ", "{svc} は年末に新機能を入れていい")),
    ("reference", "{svc} の設計資料", "{svc} のアーキテクチャ図は Confluence の設計スペースにまとめてある",
     ("{svc} の構成図はどこにある", "{svc} の設計ドキュメントを見たい")),
    ("user", "{who} の専門", "{who} は機械学習エンジニアで、Python と統計に詳しい",
     ("{who} は何が得意", "{who} の専門分野は")),
    ("feedback", "{svc} のテスト方針", "{svc} では外部 API をモックせず、サンドボックス環境を使って結合テストを行う",
     ("{svc} のテストで外部サービスをモックしていい", "{svc} の結合テストはどの環境で動かす")),
    ("project", "{svc} の障害対応", "{svc} で先週発生したメモリリークはキャッシュの上限設定漏れが原因だった",
     ("{svc} のメモリが増え続けた理由は", "{svc} の先週の障害の原因")),
    ("reference", "{svc} の問い合わせ窓口", "{svc} に関する質問は Slack の #{svc}-help チャンネルで受け付けている",
     ("{svc} について誰に聞けばいい", "{svc} の質問はどこでする")),
    ("feedback", "{svc} の命名規則", "{svc} の変数名はキャメルケースではなくスネークケースで統一する",
     ("{svc} の変数の名前の付け方", "{svc} ではキャメルケースを使う")),
    ("project", "{svc} の予算", "{svc} のクラウド費用は月額五十万円以内に抑える必要がある",
     ("{svc} のインフラにいくらまで使える", "{svc} のクラウドコストの上限")),
    ("user", "{who} の働き方", "{who} は午前中に集中作業をするので、会議は午後に入れてほしい",
     ("{who} との打ち合わせはいつがいい", "{who} が忙しい時間帯")),
)  # fmt: skip

BODIES = {
    "en": ("**Why:** the team agreed on it after it bit us.",
           "**How to apply:** whenever you work on {svc}."),
    "zh": ("**Why:** 团队之前因此出过问题。", "**How to apply:** 处理 {svc} 相关工作时。"),
    "ja": ("**Why:** 以前これで問題が起きた。", "**How to apply:** {svc} の作業をするとき。"),
}  # fmt: skip


def _memory(lang: str, number: int, template: tuple, svc: str, who: str) -> dict:
    kind, name, description, queries = template
    fill = {"svc": svc, "who": who}
    why, how = BODIES[lang]
    body = description.format(**fill) + "\n"
    if kind in ("feedback", "project"):
        body += "\n" + why + "\n" + how.format(**fill) + "\n"
    return {
        "relpath": f"{kind}_{lang}{number:02d}.md",
        "name": name.format(**fill),
        "description": description.format(**fill),
        "type": kind,
        "body": body,
        "queries": tuple(q.format(**fill) for q in queries),
        "lang": lang,
    }


def build() -> tuple[list[list[dict]], list[tuple[int, str, str, str]]]:
    """Return (projects, queries): 30 lists of 10 memories; 200 (project, relpath, lang, query)."""
    projects: list[list[dict]] = []
    queries: list[tuple[int, str, str, str]] = []
    for p, (svc, who) in enumerate(zip(SERVICES, PEOPLE, strict=True)):
        chosen = [("en", (p * 3 + k) % 20, EN[(p * 3 + k) % 20]) for k in range(6)]
        chosen += [("zh", (p + k * 5) % 10, ZH[(p + k * 5) % 10]) for k in range(2)]
        chosen += [
            ("ja", (p * 3 + k * 5) % 10, JA[(p * 3 + k * 5) % 10]) for k in range(2)
        ]
        memories = [_memory(lang, n, t, svc, who) for lang, n, t in chosen]
        projects.append(memories)
        # 7 labelled queries a project: 5 English, 1 Chinese, 1 Japanese; the
        # question variant alternates so both wordings are used.
        for k, memory in enumerate(memories[:5] + memories[6:7] + memories[8:9]):
            question = memory["queries"][(p + k) % 2]
            queries.append((p, memory["relpath"], memory["lang"], question))
    return projects, queries[:200]


def topic_text(memory: dict) -> str:
    """The memory as a classic-dialect topic file."""
    import json  # a JSON string is a YAML scalar, so `#` and `:` stay text

    name = json.dumps(memory["name"], ensure_ascii=False)
    description = json.dumps(memory["description"], ensure_ascii=False)
    return (
        f"---\nname: {name}\ndescription: {description}\n"
        f"type: {memory['type']}\n---\n{memory['body']}"
    )
