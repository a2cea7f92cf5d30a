// The one message catalog. Every string the operator reads comes from here.
// `zhCN` is typed against the English keys, so a missing translation is a type
// error; i18n.test.ts checks the rest (non-empty, same {placeholders}).

const en = {
  "app.name": "Ebb",
  "app.tagline": "Elastic GPU console",
  "app.demoBadge": "Demo fleet",
  "app.demoBadgeTitle": "You are looking at a built-in virtual fleet, not your own hosts.",
  "app.skipToContent": "Skip to content",
  "app.viewerBadge": "Viewing only",
  "app.viewerBadgeTitle": "Another Ebb process collects from this data directory; this window only shows what it records.",

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
  "fleet.emptyBody": "Hosts you register will appear here with their health and live GPU utilization. Add one in Settings, or start Ebb with --demo to look around right away.",
  "fleet.emptyAction": "Add a host in Settings",
  "fleet.summaryDegraded": "Degraded: {degraded}",
  "fleet.degradedReason": "Degraded because: {message}",
  "fleet.viewerNotice": "Another Ebb process (another window, or ebb daemon) is already collecting from this data directory. This window shows what it records and polls no host itself.",
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
  "settings.prices": "Price catalog",
  "settings.pricesComing": "Editing GPU prices by model, region and billing mode is coming.",
  "settings.about": "About Ebb",
  "settings.version": "Version",
  "settings.dataDir": "Data directory",
  "settings.mode": "Fleet",
  "settings.modeDemo": "Built-in demo fleet",
  "settings.modeLive": "Your registered hosts",
  "settings.aboutError": "Could not read the app information: {message}",
  "settings.collection": "Collection",
  "settings.collectionHere": "This window collects from the hosts",
  "settings.collectionElsewhere": "Viewing only: another Ebb process collects from this data directory",
  "settings.tokenStore": "Host tokens kept in",

  "hosts.title": "Hosts",
  "hosts.lead": "The GPU hosts this console collects from. Each one runs ebb-agent: you need its address and, if it asks for one, a token.",
  "hosts.loading": "Loading the registered hosts…",
  "hosts.loadError": "Could not load the registered hosts.",
  "hosts.retry": "Try again",
  "hosts.empty": "No hosts are registered yet. Add the first one with the button below.",
  "hosts.tableCaption": "Registered hosts",
  "hosts.col.name": "Name",
  "hosts.col.url": "Agent URL",
  "hosts.col.region": "Region",
  "hosts.col.labels": "Labels",
  "hosts.col.fingerprint": "Pinned certificate",
  "hosts.col.token": "Token",
  "hosts.col.health": "Health",
  "hosts.col.actions": "Actions",
  "hosts.tokenStored": "Stored",
  "hosts.tokenNone": "None",
  "hosts.notCollected": "Not in the fleet yet",
  "hosts.edit": "Edit",
  "hosts.editLabel": "Edit {name}",
  "hosts.remove": "Remove",
  "hosts.removeLabel": "Remove {name}",
  "hosts.confirmRemove": "Remove {name}? Ebb stops collecting from it and forgets its token.",
  "hosts.confirmRemoveYes": "Remove",
  "hosts.confirmRemoveNo": "Keep",
  "hosts.removing": "Removing…",
  "hosts.removed": "Removed {name}.",
  "hosts.removeError": "Could not remove {name}.",
  "hosts.added": "Added {name}. It shows in the Fleet view within a few seconds.",
  "hosts.saved": "Saved the changes to {name}.",
  "hosts.add": "Add host",
  "hosts.form.addTitle": "Add a host",
  "hosts.form.editTitle": "Edit {name}",
  "hosts.form.keys": "Enter saves, Escape cancels.",
  "hosts.optional": "(optional)",
  "hosts.field.name": "Name",
  "hosts.hint.name": "Letters, digits, '-', '_' and '.', up to 63 characters.",
  "hosts.hint.nameFixed": "A host cannot be renamed: remove it and add it again under the new name.",
  "hosts.field.url": "Agent URL",
  "hosts.hint.url": "http:// or https://, the host and the agent's port, e.g. https://gpu-01.example.com:7070",
  "hosts.field.region": "Region",
  "hosts.hint.region": "Where the host is, e.g. us-east-1 (no spaces). The Fleet view groups hosts by region.",
  "hosts.field.labels": "Labels",
  "hosts.hint.labels": "key=value pairs separated by commas, e.g. team=ml, rack=7",
  "hosts.field.fingerprint": "Certificate fingerprint",
  "hosts.hint.fingerprint": "SHA-256 of the agent's TLS certificate, to pin it (the agent logs it when it starts). Needs an https:// URL.",
  "hosts.field.token": "Token",
  "hosts.hint.token": "Kept in {store}. It is never shown again once saved.",
  "hosts.hint.tokenStored": "A token is stored in {store}. Leave this empty to keep it, or type a new one to replace it.",
  "hosts.field.tokenRemove": "Remove the stored token",
  "hosts.tokenStore.keychain": "the OS keychain",
  "hosts.tokenStore.memory": "memory only (forgotten when Ebb closes)",
  "hosts.tokenStore.file": "the file {path}, readable only by you",
  "hosts.tokenStore.unknown": "the token store",
  "hosts.test": "Test connection",
  "hosts.testing": "Testing…",
  "hosts.testOk": "Connected: {host} runs ebb-agent {version} on the {backend} backend.",
  "hosts.save.add": "Add host",
  "hosts.save.edit": "Save changes",
  "hosts.saving": "Saving…",
  "hosts.cancel": "Cancel",
  "hosts.detail": "Detail:",
  "hosts.viewerNotice": "Another Ebb process collects from this data directory. Hosts you change here are saved to the shared registry; health comes from what that process records.",

  "hosts.check.nameRequired": "Give the host a name.",
  "hosts.check.nameLength": "The name is too long: at most {max} characters.",
  "hosts.check.namePattern": "Use only letters, digits, '-', '_' and '.' in the name (no spaces).",
  "hosts.check.urlRequired": "Give the agent's URL, e.g. http://10.0.0.5:7070.",
  "hosts.check.urlScheme": "The URL must start with http:// or https://.",
  "hosts.check.urlHost": "Add the host name or IP address after http:// or https://.",
  "hosts.check.regionRequired": "Give a region, e.g. us-east-1.",
  "hosts.check.regionLength": "The region is too long: at most {max} characters.",
  "hosts.check.regionSpaces": "Remove the spaces from the region, e.g. us-east-1.",
  "hosts.check.labelPair": "“{piece}” is not a key=value pair.",
  "hosts.check.labelKeyEmpty": "“{piece}” has no key before the =.",
  "hosts.check.labelLength": "Label “{key}” is too long: keys up to {keyMax} characters, values up to {valueMax}.",
  "hosts.check.labelDuplicate": "The label key “{key}” appears twice.",
  "hosts.check.labelCount": "Too many labels: at most {max}.",
  "hosts.check.fingerprintFormat": "The fingerprint must be a SHA-256: 64 hexadecimal digits, colons optional.",
  "hosts.check.fingerprintHttps": "A pinned certificate needs an https:// URL.",

  "hosts.server.name": "The console did not accept this name.",
  "hosts.server.url": "The console did not accept this URL.",
  "hosts.server.region": "The console did not accept this region.",
  "hosts.server.labels": "The console did not accept these labels.",
  "hosts.server.fingerprint": "The console did not accept this fingerprint.",
  "hosts.server.token": "The console did not accept this token.",

  "hosts.error.bad_url": "This is not a URL the console can use. Write it as http:// or https:// followed by the host and port, e.g. https://gpu-01:7070.",
  "hosts.error.dns": "The host name could not be found. Check its spelling, or use the host's IP address.",
  "hosts.error.refused": "Nothing is listening at that address. Check that ebb-agent is running on the host and that the port is right.",
  "hosts.error.timeout": "The host did not answer in time. Check that it is up and that no firewall blocks the agent's port.",
  "hosts.error.tls": "The secure connection failed. Check http:// against https:// and the pinned certificate fingerprint.",
  "hosts.error.connect": "Could not connect to the host. Check the address and the network between this computer and the host.",
  "hosts.error.unauthorized": "The agent refused the token. Paste the host's current token.",
  "hosts.error.forbidden": "The token is valid but not allowed to do this. Create a token with the right scope on the host.",
  "hosts.error.status": "The agent answered with an error. The detail below and the agent's log say more.",
  "hosts.error.decode": "Something answered, but it is not an Ebb agent. Check the address and the port.",
  "hosts.error.incompatible": "The agent speaks a different API version than this console. Update one of them so they match.",
  "hosts.error.invalid_input": "The console did not accept what was typed. Correct the field it names.",
  "hosts.error.token_store": "The token store could not be used. Unlock the OS keychain, or start Ebb with --token-store file.",
  "hosts.error.not_found": "This host is no longer registered; it may have been removed elsewhere. The list has been reloaded.",
  "hosts.error.internal": "The console hit an internal error. The detail below and the app's log say more.",
  "hosts.error.other": "That did not work.",
} as const;

export type MessageKey = keyof typeof en;

const zhCN: Record<MessageKey, string> = {
  "app.name": "Ebb",
  "app.tagline": "弹性 GPU 控制台",
  "app.demoBadge": "演示集群",
  "app.demoBadgeTitle": "当前显示的是内置的虚拟集群，并非您自己的主机。",
  "app.skipToContent": "跳到正文",
  "app.viewerBadge": "仅查看",
  "app.viewerBadgeTitle": "另一个 Ebb 进程正在从此数据目录采集数据；本窗口只显示它记录的内容。",

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
  "fleet.emptyBody": "登记的主机会显示在这里，附带健康状态和实时 GPU 利用率。请在“设置”中添加主机；想马上体验，也可以用 --demo 参数启动 Ebb。",
  "fleet.emptyAction": "前往“设置”添加主机",
  "fleet.summaryDegraded": "降级：{degraded}",
  "fleet.degradedReason": "降级原因：{message}",
  "fleet.viewerNotice": "另一个 Ebb 进程（另一个窗口或 ebb daemon）已经在从此数据目录采集数据。本窗口只显示它记录的内容，自身不会轮询任何主机。",
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
  "settings.prices": "价格目录",
  "settings.pricesComing": "按 GPU 型号、区域和计费方式编辑价格的功能即将推出。",
  "settings.about": "关于 Ebb",
  "settings.version": "版本",
  "settings.dataDir": "数据目录",
  "settings.mode": "集群",
  "settings.modeDemo": "内置演示集群",
  "settings.modeLive": "您登记的主机",
  "settings.aboutError": "无法读取应用信息：{message}",
  "settings.collection": "数据采集",
  "settings.collectionHere": "由本窗口采集主机数据",
  "settings.collectionElsewhere": "仅查看：另一个 Ebb 进程正在从此数据目录采集数据",
  "settings.tokenStore": "主机令牌保存位置",

  "hosts.title": "主机",
  "hosts.lead": "本控制台采集数据的 GPU 主机。每台主机都运行 ebb-agent：您需要知道它的地址，如果它要求令牌，还需要令牌。",
  "hosts.loading": "正在加载已登记的主机…",
  "hosts.loadError": "无法加载已登记的主机。",
  "hosts.retry": "重试",
  "hosts.empty": "还没有登记任何主机。请用下方的按钮添加第一台。",
  "hosts.tableCaption": "已登记的主机",
  "hosts.col.name": "名称",
  "hosts.col.url": "Agent 地址",
  "hosts.col.region": "区域",
  "hosts.col.labels": "标签",
  "hosts.col.fingerprint": "固定的证书",
  "hosts.col.token": "令牌",
  "hosts.col.health": "健康状态",
  "hosts.col.actions": "操作",
  "hosts.tokenStored": "已保存",
  "hosts.tokenNone": "无",
  "hosts.notCollected": "尚未加入集群",
  "hosts.edit": "编辑",
  "hosts.editLabel": "编辑 {name}",
  "hosts.remove": "移除",
  "hosts.removeLabel": "移除 {name}",
  "hosts.confirmRemove": "确定移除 {name} 吗？Ebb 将停止从它采集数据，并删除它的令牌。",
  "hosts.confirmRemoveYes": "移除",
  "hosts.confirmRemoveNo": "保留",
  "hosts.removing": "正在移除…",
  "hosts.removed": "已移除 {name}。",
  "hosts.removeError": "无法移除 {name}。",
  "hosts.added": "已添加 {name}。几秒钟内它就会出现在“集群”页面中。",
  "hosts.saved": "已保存对 {name} 的修改。",
  "hosts.add": "添加主机",
  "hosts.form.addTitle": "添加主机",
  "hosts.form.editTitle": "编辑 {name}",
  "hosts.form.keys": "按 Enter 保存，按 Esc 取消。",
  "hosts.optional": "（可选）",
  "hosts.field.name": "名称",
  "hosts.hint.name": "可使用字母、数字、“-”、“_”和“.”，最多 63 个字符。",
  "hosts.hint.nameFixed": "主机不能改名：请先移除，再用新名称重新添加。",
  "hosts.field.url": "Agent 地址",
  "hosts.hint.url": "以 http:// 或 https:// 开头，后接主机和 Agent 端口，例如 https://gpu-01.example.com:7070",
  "hosts.field.region": "区域",
  "hosts.hint.region": "主机所在的区域，例如 us-east-1（不能含空格）。“集群”页面按区域分组显示主机。",
  "hosts.field.labels": "标签",
  "hosts.hint.labels": "用逗号分隔的 key=value，例如 team=ml, rack=7",
  "hosts.field.fingerprint": "证书指纹",
  "hosts.hint.fingerprint": "Agent TLS 证书的 SHA-256 指纹，用于固定证书（Agent 启动时会在日志中打印）。需要 https:// 地址。",
  "hosts.field.token": "令牌",
  "hosts.hint.token": "保存在{store}中。保存之后不会再显示。",
  "hosts.hint.tokenStored": "{store}中已保存了一个令牌。留空表示保留它；输入新令牌则替换它。",
  "hosts.field.tokenRemove": "删除已保存的令牌",
  "hosts.tokenStore.keychain": "系统钥匙串",
  "hosts.tokenStore.memory": "内存（Ebb 关闭后即丢失）",
  "hosts.tokenStore.file": "文件 {path}（仅您本人可读）",
  "hosts.tokenStore.unknown": "令牌存储",
  "hosts.test": "测试连接",
  "hosts.testing": "正在测试…",
  "hosts.testOk": "连接成功：{host} 运行 ebb-agent {version}，后端为 {backend}。",
  "hosts.save.add": "添加主机",
  "hosts.save.edit": "保存修改",
  "hosts.saving": "正在保存…",
  "hosts.cancel": "取消",
  "hosts.detail": "详细信息：",
  "hosts.viewerNotice": "另一个 Ebb 进程正在从此数据目录采集数据。在这里修改的主机会保存到共享的登记表中；健康状态来自该进程记录的数据。",

  "hosts.check.nameRequired": "请为主机起一个名称。",
  "hosts.check.nameLength": "名称太长：最多 {max} 个字符。",
  "hosts.check.namePattern": "名称只能使用字母、数字、“-”、“_”和“.”（不能有空格）。",
  "hosts.check.urlRequired": "请填写 Agent 地址，例如 http://10.0.0.5:7070。",
  "hosts.check.urlScheme": "地址必须以 http:// 或 https:// 开头。",
  "hosts.check.urlHost": "请在 http:// 或 https:// 之后填写主机名或 IP 地址。",
  "hosts.check.regionRequired": "请填写区域，例如 us-east-1。",
  "hosts.check.regionLength": "区域太长：最多 {max} 个字符。",
  "hosts.check.regionSpaces": "请去掉区域中的空格，例如 us-east-1。",
  "hosts.check.labelPair": "“{piece}”不是 key=value 的形式。",
  "hosts.check.labelKeyEmpty": "“{piece}”在 = 前面缺少键名。",
  "hosts.check.labelLength": "标签“{key}”太长：键最多 {keyMax} 个字符，值最多 {valueMax} 个字符。",
  "hosts.check.labelDuplicate": "标签键“{key}”出现了两次。",
  "hosts.check.labelCount": "标签太多：最多 {max} 个。",
  "hosts.check.fingerprintFormat": "指纹必须是 SHA-256：64 位十六进制数字，冒号可有可无。",
  "hosts.check.fingerprintHttps": "固定证书需要 https:// 地址。",

  "hosts.server.name": "控制台不接受这个名称。",
  "hosts.server.url": "控制台不接受这个地址。",
  "hosts.server.region": "控制台不接受这个区域。",
  "hosts.server.labels": "控制台不接受这些标签。",
  "hosts.server.fingerprint": "控制台不接受这个指纹。",
  "hosts.server.token": "控制台不接受这个令牌。",

  "hosts.error.bad_url": "控制台无法使用这个地址。请写成 http:// 或 https:// 加主机和端口的形式，例如 https://gpu-01:7070。",
  "hosts.error.dns": "找不到这个主机名。请检查拼写，或改用主机的 IP 地址。",
  "hosts.error.refused": "该地址上没有程序在监听。请确认主机上的 ebb-agent 正在运行，并且端口正确。",
  "hosts.error.timeout": "主机没有及时响应。请确认主机已开机，并且没有防火墙拦截 Agent 的端口。",
  "hosts.error.tls": "安全连接失败。请核对用的是 http:// 还是 https://，以及固定的证书指纹。",
  "hosts.error.connect": "无法连接到主机。请检查地址，以及本机与主机之间的网络。",
  "hosts.error.unauthorized": "Agent 拒绝了这个令牌。请粘贴该主机当前有效的令牌。",
  "hosts.error.forbidden": "令牌有效，但没有执行此操作的权限。请在主机上创建一个权限范围合适的令牌。",
  "hosts.error.status": "Agent 返回了错误。下方的详细信息和 Agent 的日志中有更多说明。",
  "hosts.error.decode": "有程序应答了，但它不是 Ebb Agent。请检查地址和端口。",
  "hosts.error.incompatible": "Agent 的 API 版本与本控制台不同。请升级其中一方，使两者一致。",
  "hosts.error.invalid_input": "控制台不接受所填的内容。请修改它指出的字段。",
  "hosts.error.token_store": "无法使用令牌存储。请解锁系统钥匙串，或用 --token-store file 参数启动 Ebb。",
  "hosts.error.not_found": "该主机已不在登记表中，可能已在别处被移除。列表已重新加载。",
  "hosts.error.internal": "控制台发生内部错误。下方的详细信息和应用日志中有更多说明。",
  "hosts.error.other": "操作没有成功。",
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
