// The one message catalog. Every string the operator reads comes from here.
// `zhCN` is typed against the English keys, so a missing translation is a type
// error; i18n.test.ts checks the rest (non-empty, same {placeholders}).

const en = {
  "app.name": "Ebb",
  "app.tagline": "Elastic GPU console",
  "app.demoBadge": "Demo fleet",
  "app.demoBadgeTitle": "You are looking at a built-in virtual fleet, not your own hosts.",
  "app.skipToContent": "Skip to content",

  "nav.label": "Main",
  "nav.fleet": "Fleet",
  "nav.pool": "Pool",
  "nav.rules": "Rules",
  "nav.costs": "Costs",
  "nav.activity": "Activity",
  "nav.settings": "Settings",

  "common.empty": "—",
  "common.listSeparator": ", ",
  "common.comingSoon": "Coming soon",
  "common.loading": "Loading…",

  "error.unknown": "Something went wrong, but no reason was given.",
  "error.noShell": "The Ebb desktop shell is not answering. Open this console from the Ebb app rather than a web browser.",

  "health.online": "Online",
  "health.offline": "Offline",
  "health.degraded": "Degraded",
  "health.unknown": "Unknown",

  "fleet.title": "Fleet",
  "fleet.lead": "The hosts this console collects from, their health, and how busy their GPUs are.",
  "fleet.loading": "Connecting to the console…",
  "fleet.summary": "Hosts: {hosts} · GPUs: {gpus} · Online: {online}",
  "fleet.sampleRound": "Sample round {tick}",
  "fleet.emptyTitle": "No hosts yet",
  "fleet.emptyBody": "Hosts you register will appear here with their health and live GPU utilization. To look around right away, start Ebb with --demo.",
  "fleet.regionNone": "No region",
  "fleet.regionHosts": "Hosts in {region}",
  "fleet.col.name": "Host",
  "fleet.col.region": "Region",
  "fleet.col.health": "Health",
  "fleet.col.gpus": "GPUs",
  "fleet.col.models": "Models",
  "fleet.col.util": "Mean utilization",
  "fleet.lastError": "Last error: {message}",
  "fleet.chartsTitle": "GPU utilization",
  "fleet.chartCaption": "{host} · {region}",
  "fleet.chartAlt": "Line chart of recent utilization for each GPU on {host}",
  "fleet.chartLoading": "Drawing the chart…",
  "fleet.chartError": "Could not draw the chart for {host}: {message}",
  "fleet.snapshotError": "Could not load the fleet: {message}",
  "fleet.listenError": "Live updates are not arriving: {message}. This view will not refresh on its own.",

  "pool.title": "Pool",
  "pool.empty": "This is where you will rent and release GPUs: drag the slider to the number you want and see the cost before you let go, follow the pool's utilization chart, and see every lease it holds.",
  "rules.title": "Rules",
  "rules.empty": "This is where you will write auto-scaling rules — thresholds, target tracking and schedules — see warnings as you type, and replay a rule set against past demand before you turn it on.",
  "costs.title": "Costs",
  "costs.empty": "This is where you will compare billing plans side by side, get the cheapest base commitment for your demand, and follow this month's spend and where it is heading.",
  "activity.title": "Activity",
  "activity.empty": "This is where every scaling action will be listed: what changed, when, which rule or person did it, and why.",

  "settings.title": "Settings",
  "settings.appearance": "Appearance",
  "settings.language": "Language",
  "settings.language.en": "English",
  "settings.language.zh-CN": "简体中文",
  "settings.theme": "Theme",
  "settings.theme.system": "System",
  "settings.theme.light": "Light",
  "settings.theme.dark": "Dark",
  "settings.savedLocally": "Saved on this computer.",
  "settings.hosts": "Hosts",
  "settings.hostsComing": "Registering GPU hosts — name, address, region and labels — is coming.",
  "settings.tokens": "Access tokens",
  "settings.tokensComing": "Managing host tokens, kept in your system keychain, is coming.",
  "settings.prices": "Price catalog",
  "settings.pricesComing": "Editing GPU prices by model, region and billing mode is coming.",
  "settings.about": "About Ebb",
  "settings.version": "Version",
  "settings.dataDir": "Data directory",
  "settings.mode": "Fleet",
  "settings.modeDemo": "Built-in demo fleet",
  "settings.modeLive": "Your registered hosts",
  "settings.aboutError": "Could not read the app information: {message}",
} as const;

export type MessageKey = keyof typeof en;

const zhCN: Record<MessageKey, string> = {
  "app.name": "Ebb",
  "app.tagline": "弹性 GPU 控制台",
  "app.demoBadge": "演示集群",
  "app.demoBadgeTitle": "当前显示的是内置的虚拟集群，并非您自己的主机。",
  "app.skipToContent": "跳到正文",

  "nav.label": "主导航",
  "nav.fleet": "集群",
  "nav.pool": "资源池",
  "nav.rules": "规则",
  "nav.costs": "费用",
  "nav.activity": "活动",
  "nav.settings": "设置",

  "common.empty": "—",
  "common.listSeparator": "、",
  "common.comingSoon": "即将推出",
  "common.loading": "加载中…",

  "error.unknown": "出现了问题，但没有返回具体原因。",
  "error.noShell": "Ebb 桌面程序没有响应。请通过 Ebb 应用打开此控制台，而不要在网页浏览器中打开。",

  "health.online": "在线",
  "health.offline": "离线",
  "health.degraded": "降级",
  "health.unknown": "未知",

  "fleet.title": "集群",
  "fleet.lead": "本控制台正在采集的主机、它们的健康状态，以及 GPU 的繁忙程度。",
  "fleet.loading": "正在连接控制台…",
  "fleet.summary": "主机：{hosts} · GPU：{gpus} · 在线：{online}",
  "fleet.sampleRound": "第 {tick} 轮采样",
  "fleet.emptyTitle": "还没有主机",
  "fleet.emptyBody": "登记的主机会显示在这里，附带健康状态和实时 GPU 利用率。想马上体验，可以用 --demo 参数启动 Ebb。",
  "fleet.regionNone": "未指定区域",
  "fleet.regionHosts": "{region} 的主机",
  "fleet.col.name": "主机",
  "fleet.col.region": "区域",
  "fleet.col.health": "健康状态",
  "fleet.col.gpus": "GPU 数",
  "fleet.col.models": "型号",
  "fleet.col.util": "平均利用率",
  "fleet.lastError": "最近一次错误：{message}",
  "fleet.chartsTitle": "GPU 利用率",
  "fleet.chartCaption": "{host} · {region}",
  "fleet.chartAlt": "{host} 上每块 GPU 近期利用率的折线图",
  "fleet.chartLoading": "正在绘制图表…",
  "fleet.chartError": "无法绘制 {host} 的图表：{message}",
  "fleet.snapshotError": "无法加载集群信息：{message}",
  "fleet.listenError": "没有收到实时更新：{message}。此页面不会自动刷新。",

  "pool.title": "资源池",
  "pool.empty": "您将在这里租用和释放 GPU：把滑块拖到想要的数量，松开鼠标之前就能看到费用；还可以查看资源池的利用率图表和它持有的每一份租约。",
  "rules.title": "规则",
  "rules.empty": "您将在这里编写自动扩缩容规则——阈值、目标跟踪和定时计划——输入时即可看到警告，并能在启用之前用历史需求回放整套规则。",
  "costs.title": "费用",
  "costs.empty": "您将在这里并排比较各种计费方案，获得满足需求的最省钱的基础承诺量，并跟踪本月支出及其走势。",
  "activity.title": "活动",
  "activity.empty": "每一次扩缩容操作都会列在这里：改了什么、什么时候改的、由哪条规则或哪位操作员发起，以及原因。",

  "settings.title": "设置",
  "settings.appearance": "外观",
  "settings.language": "语言",
  "settings.language.en": "English",
  "settings.language.zh-CN": "简体中文",
  "settings.theme": "主题",
  "settings.theme.system": "跟随系统",
  "settings.theme.light": "浅色",
  "settings.theme.dark": "深色",
  "settings.savedLocally": "设置保存在本机。",
  "settings.hosts": "主机",
  "settings.hostsComing": "登记 GPU 主机（名称、地址、区域和标签）的功能即将推出。",
  "settings.tokens": "访问令牌",
  "settings.tokensComing": "管理主机访问令牌（保存在系统钥匙串中）的功能即将推出。",
  "settings.prices": "价格目录",
  "settings.pricesComing": "按 GPU 型号、区域和计费方式编辑价格的功能即将推出。",
  "settings.about": "关于 Ebb",
  "settings.version": "版本",
  "settings.dataDir": "数据目录",
  "settings.mode": "集群",
  "settings.modeDemo": "内置演示集群",
  "settings.modeLive": "您登记的主机",
  "settings.aboutError": "无法读取应用信息：{message}",
};

export type Locale = "en" | "zh-CN";
export const LOCALES: readonly Locale[] = ["en", "zh-CN"];

/** Both catalogs, for tests and tooling. */
export const catalogs: Readonly<Record<Locale, Readonly<Record<MessageKey, string>>>> = {
  en,
  "zh-CN": zhCN,
};

export function isLocale(value: unknown): value is Locale {
  return value === "en" || value === "zh-CN";
}

/**
 * Pick the UI language from the browser's preference list. The first tag we can
 * serve wins: any Chinese tag (zh, zh-CN, zh-TW, zh-Hans-SG, zh_CN...) means
 * Simplified Chinese, any English tag means English; other languages are skipped.
 * Nothing usable means English.
 */
export function detectLocale(languages: readonly string[]): Locale {
  for (const tag of languages) {
    const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
    if (primary === "zh") return "zh-CN";
    if (primary === "en") return "en";
  }
  return "en";
}

export type Params = Readonly<Record<string, string | number>>;

/** Replace `{name}` with params.name; unknown placeholders are left as they are. */
export function interpolate(template: string, params?: Params): string {
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

let current: Locale = "en";
const listeners = new Set<(locale: Locale) => void>();

export function getLocale(): Locale {
  return current;
}

/** Translate `key` in the current locale. */
export function t(key: MessageKey, params?: Params): string {
  return interpolate(catalogs[current][key], params);
}

/** Translate `key` in a given locale (used by tests and by language names). */
export function tIn(locale: Locale, key: MessageKey, params?: Params): string {
  return interpolate(catalogs[locale][key], params);
}

/** Switch language; updates <html lang> and tells subscribers to re-render. */
export function setLocale(locale: Locale): void {
  const changed = locale !== current;
  current = locale;
  if (typeof document !== "undefined") document.documentElement.lang = locale;
  if (changed) for (const fn of [...listeners]) fn(locale);
}

/** Subscribe to language changes; returns the unsubscribe function. */
export function onLocaleChange(fn: (locale: Locale) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
