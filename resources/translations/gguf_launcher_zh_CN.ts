<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="zh_CN">
<context>
    <name />
    <message>
        <source>No model yet. Open a .gguf file (or drop one here), or try the demo model.</source>
        <translation>还没有模型。请打开一个 .gguf 文件（或把文件拖到这里），或者试试演示模型。</translation>
    </message>
    <message>
        <source>{n} parameters</source>
        <translation>{n} 参数</translation>
    </message>
    <message>
        <source>trained context {n}</source>
        <translation>训练上下文 {n}</translation>
    </message>
    <message>
        <source>Open a model to see how much memory it needs.</source>
        <translation>打开一个模型，即可看到它需要多少内存。</translation>
    </message>
    <message>
        <source>No memory plan: {error}</source>
        <translation>无法估算内存：{error}</translation>
    </message>
    <message>
        <source>Fits in the memory available.</source>
        <translation>可用内存放得下。</translation>
    </message>
    <message>
        <source>Does not fit in the memory available.</source>
        <translation>可用内存放不下。</translation>
    </message>
    <message>
        <source>model weights</source>
        <translation>模型权重</translation>
    </message>
    <message>
        <source>context (KV cache)</source>
        <translation>上下文（KV 缓存）</translation>
    </message>
    <message>
        <source>compute buffers</source>
        <translation>计算缓冲区</translation>
    </message>
    <message>
        <source>overhead</source>
        <translation>额外开销</translation>
    </message>
    <message>
        <source>needs {need} of {free} free</source>
        <translation>需要 {need}，可用 {free}</translation>
    </message>
    <message>
        <source>RAM</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>VRAM, GPU {index}</source>
        <translation>显存，GPU {index}</translation>
    </message>
    <message>
        <source>Loading the chat…</source>
        <translation>正在加载对话…</translation>
    </message>
    <message>
        <source>Checking fit…</source>
        <translation>正在判断是否放得下…</translation>
    </message>
    <message>
        <source>Fits on the graphics card</source>
        <translation>显卡放得下</translation>
    </message>
    <message>
        <source>{n} of {m} layers on the card</source>
        <translation>{m} 层中的 {n} 层在显卡上</translation>
    </message>
    <message>
        <source>Processor only</source>
        <translation>仅处理器</translation>
    </message>
    <message>
        <source>Does not fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>Fit unknown</source>
        <translation>无法判断</translation>
    </message>
    <message>
        <source>Not checked</source>
        <translation>未检查</translation>
    </message>
    <message>
        <source>{name} ({n} parts)</source>
        <translation>{name}（{n} 个分卷）</translation>
    </message>
    <message>
        <source>{n} downloads</source>
        <translation>{n} 次下载</translation>
    </message>
</context>
<context>
    <name>AdvancedForm</name>
    <message>
        <source>KV cache type (K)</source>
        <translation>KV 缓存类型（K）</translation>
    </message>
    <message>
        <source>KV cache type (V)</source>
        <translation>KV 缓存类型（V）</translation>
    </message>
    <message>
        <source>Flash attention</source>
        <translation>Flash Attention（快速注意力）</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程数</translation>
    </message>
    <message>
        <source>Loading</source>
        <translation>加载方式</translation>
    </message>
    <message>
        <source>Experts on the processor</source>
        <translation>放在处理器上的专家</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>llama-server program</source>
        <translation>llama-server 程序</translation>
    </message>
    <message>
        <source>Listen address</source>
        <translation>监听地址</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>If the port is busy</source>
        <translation>端口被占用时</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>map the file (fast start)</source>
        <translation>映射文件（启动快）</translation>
    </message>
    <message>
        <source>read into memory</source>
        <translation>读入内存</translation>
    </message>
    <message>
        <source>map and lock in RAM</source>
        <translation>映射并锁定在内存中</translation>
    </message>
    <message>
        <source>built-in (llama-cpp-python)</source>
        <translation>内置（llama-cpp-python）</translation>
    </message>
    <message>
        <source>llama-server (llama.cpp)</source>
        <translation>llama-server（llama.cpp）</translation>
    </message>
    <message>
        <source>only for this model</source>
        <translation>仅用于此模型</translation>
    </message>
    <message>
        <source>Unticked, the engine and the llama-server program are the same for every model you open.</source>
        <translation>不勾选时，打开的每个模型都使用同一个引擎和同一个 llama-server 程序。</translation>
    </message>
    <message>
        <source>use a free port</source>
        <translation>改用空闲端口</translation>
    </message>
    <message>
        <source>stop with an error</source>
        <translation>报错并停止</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>For a model with experts: the experts of this many layers stay in the computer's memory while everything else runs on the graphics card. Often much faster than putting fewer layers on the card. Only the llama-server engine can do it; "Find safe settings" measures the best number.</source>
        <translation>适用于含专家的模型：这么多层的专家留在电脑内存中，其余部分都在显卡上运行。通常比把更少的层放到显卡上快得多。只有 llama-server 引擎能这样做；“查找安全设置”会测出最合适的数值。</translation>
    </message>
    <message>
        <source>found automatically</source>
        <translation>自动查找</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>none (only this computer can connect)</source>
        <translation>无（只有本机可以连接）</translation>
    </message>
    <message>
        <source>Choose the llama-server program</source>
        <translation>选择 llama-server 程序</translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Connect to a server…</source>
        <translation>连接到服务器…</translation>
    </message>
    <message>
        <source>Type a message. Enter sends, Shift+Enter starts a new line.</source>
        <translation>输入消息。按 Enter 发送，Shift+Enter 换行。</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>The chat stopped because of an unexpected problem: {error}</source>
        <translation>对话因意外问题而停止：{error}</translation>
    </message>
    <message>
        <source>This conversation could not be opened: {error}</source>
        <translation>无法打开这个对话：{error}</translation>
    </message>
</context>
<context>
    <name>ChatPlaceholder</name>
    <message>
        <source>The chat could not be loaded: {error}</source>
        <translation>无法加载对话：{error}</translation>
    </message>
</context>
<context>
    <name>ChatStatus</name>
    <message>
        <source>Your last message was not answered. It is kept; send it again once the model is ready.</source>
        <translation>你的上一条消息没有得到回答。消息已保留；模型就绪后请再次发送。</translation>
    </message>
    <message>
        <source>Your last message was not answered. It is kept and can be sent again.</source>
        <translation>你的上一条消息没有得到回答。消息已保留，可以再次发送。</translation>
    </message>
    <message>
        <source>Wait longer and send again</source>
        <translation>多等一会儿再发送</translation>
    </message>
    <message>
        <source>Send again</source>
        <translation>再次发送</translation>
    </message>
    <message>
        <source>The model is not running. Start it in the Server section, then chat here.</source>
        <translation>模型没有运行。请先在“服务器”部分启动它，再在这里对话。</translation>
    </message>
    <message>
        <source>The model is loading; a message sent now waits until it is ready.</source>
        <translation>模型正在加载；现在发送的消息会等到它就绪后再处理。</translation>
    </message>
</context>
<context>
    <name>CheckList</name>
    <message>
        <source>Passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <source>All {n} checks passed.</source>
        <translation>全部 {n} 项检查通过。</translation>
    </message>
    <message>
        <source>{n} of {total} checks passed.</source>
        <translation>{total} 项检查中有 {n} 项通过。</translation>
    </message>
    <message>
        <source>Hide details</source>
        <translation>隐藏详情</translation>
    </message>
    <message>
        <source>Show details</source>
        <translation>显示详情</translation>
    </message>
</context>
<context>
    <name>ConnectDialog</name>
    <message>
        <source>Connect to a server</source>
        <translation>连接到服务器</translation>
    </message>
    <message>
        <source>Chat with a model that runs elsewhere: another computer running this app, llama.cpp, Ollama or LM Studio.</source>
        <translation>与在别处运行的模型对话：运行本应用的另一台电脑、llama.cpp、Ollama 或 LM Studio。</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>Chat with it</source>
        <translation>与它对话</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Asking the server…</source>
        <translation>正在询问服务器…</translation>
    </message>
    <message>
        <source>The server could not be asked: {error}</source>
        <translation>无法询问服务器：{error}</translation>
    </message>
</context>
<context>
    <name>ContextMeter</name>
    <message>
        <source>Context:</source>
        <translation>上下文：</translation>
    </message>
    <message>
        <source>not measured yet</source>
        <translation>尚未测量</translation>
    </message>
    <message>
        <source>{used} tokens used (context size unknown)</source>
        <translation>已用 {used} 个词元（上下文大小未知）</translation>
    </message>
    <message>
        <source>{used} of {ctx} tokens used</source>
        <translation>已用 {used} / {ctx} 个词元</translation>
    </message>
    <message>
        <source>(estimate)</source>
        <translation>（估算）</translation>
    </message>
</context>
<context>
    <name>CrashCard</name>
    <message>
        <source>The server stopped unexpectedly and gave no reason we recognise.</source>
        <translation>服务器意外停止，且没有给出我们能识别的原因。</translation>
    </message>
    <message>
        <source>Evidence behind this diagnosis ({count})</source>
        <translation>这个诊断所依据的证据（{count}）</translation>
    </message>
    <message>
        <source>Rebuild the engine and restart</source>
        <translation>重新构建引擎并重启</translation>
    </message>
    <message>
        <source>Use the other engine and restart</source>
        <translation>改用另一个引擎并重启</translation>
    </message>
    <message>
        <source>Apply fix and restart</source>
        <translation>应用修复并重启</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>The server keeps crashing, so automatic restarts were stopped.</source>
        <translation>服务器反复崩溃，因此已停止自动重启。</translation>
    </message>
    <message>
        <source>The server stopped, and restarting it with the same settings would not help.</source>
        <translation>服务器已停止，用相同的设置重启也无济于事。</translation>
    </message>
    <message>
        <source>The server could not be started or kept running.</source>
        <translation>服务器无法启动或无法保持运行。</translation>
    </message>
    <message>
        <source>The server stopped unexpectedly and was restarted automatically.</source>
        <translation>服务器意外停止，已自动重启。</translation>
    </message>
    <message>
        <source>The server was restarted on purpose before the computer ran out of memory.</source>
        <translation>为免电脑内存耗尽，服务器已被主动重启。</translation>
    </message>
    <message>
        <source>The server runs, but not on the graphics card as planned.</source>
        <translation>服务器在运行，但没有按计划使用显卡。</translation>
    </message>
    <message>
        <source>The server stopped unexpectedly.</source>
        <translation>服务器意外停止。</translation>
    </message>
    <message>
        <source>Context size</source>
        <translation>上下文大小</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source>Parallel slots</source>
        <translation>并行槽位</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Micro-batch size</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>Load mode</source>
        <translation>加载方式</translation>
    </message>
    <message>
        <source>Flash attention</source>
        <translation>Flash Attention（快速注意力）</translation>
    </message>
    <message>
        <source>K cache type</source>
        <translation>K 缓存类型</translation>
    </message>
    <message>
        <source>V cache type</source>
        <translation>V 缓存类型</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>线程数</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>Extra arguments</source>
        <translation>额外参数</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Workers</source>
        <translation>工作机</translation>
    </message>
    <message>
        <source>Applying the fix ({changes}); the server is restarting.</source>
        <translation>正在应用修复（{changes}）；服务器正在重启。</translation>
    </message>
    <message>
        <source>Applying the fix; the server is restarting.</source>
        <translation>正在应用修复；服务器正在重启。</translation>
    </message>
    <message>
        <source>Applied: {changes}; the server is running again.</source>
        <translation>已应用：{changes}；服务器已重新运行。</translation>
    </message>
    <message>
        <source>Applied; the server is running again.</source>
        <translation>已应用；服务器已重新运行。</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>任意空闲端口</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>The fix changes: {changes}</source>
        <translation>修复将更改：{changes}</translation>
    </message>
</context>
<context>
    <name>CrashNotice</name>
    <message>
        <source>Something went wrong inside the app; it was written to the app log. Your work is kept. If it happens again, save a diagnostics report (Help menu).</source>
        <translation>应用内部出错了，详细信息已写入应用日志。你的工作都还在。如果再次发生，请保存一份诊断报告（帮助菜单）。</translation>
    </message>
    <message>
        <source>Something went wrong inside the app. Your work is kept. If it happens again, save a diagnostics report (Help menu).</source>
        <translation>应用内部出错了。你的工作都还在。如果再次发生，请保存一份诊断报告（帮助菜单）。</translation>
    </message>
    <message>
        <source>Something went wrong</source>
        <translation>出了点问题</translation>
    </message>
</context>
<context>
    <name>DemoRow</name>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Getting the demo model…</source>
        <translation>正在获取演示模型…</translation>
    </message>
    <message>
        <source>The demo model was not fetched: cancelled, nothing was kept.</source>
        <translation>演示模型没有下载：已取消，没有保留任何文件。</translation>
    </message>
    <message>
        <source>Could not get the demo model: {error}</source>
        <translation>无法获取演示模型：{error}</translation>
    </message>
</context>
<context>
    <name>DiagnosticsReport</name>
    <message>
        <source>Writing the diagnostics report…</source>
        <translation>正在写入诊断报告…</translation>
    </message>
    <message>
        <source>Diagnostics report saved: {path}</source>
        <translation>诊断报告已保存：{path}</translation>
    </message>
    <message>
        <source>The diagnostics report is saved as {name}. Send this file to whoever helps you.</source>
        <translation>诊断报告已保存为 {name}。请把这个文件发给帮助你的人。</translation>
    </message>
    <message>
        <source>API keys, tokens, your user name, your home folder and this computer's name were removed from it.</source>
        <translation>其中已去除 API 密钥、令牌、你的用户名、主文件夹路径和这台电脑的名称。</translation>
    </message>
    <message>
        <source>Not included (it could not be read): {parts}</source>
        <translation>未包含（无法读取）：{parts}</translation>
    </message>
    <message>
        <source>The diagnostics report could not be written.</source>
        <translation>无法写入诊断报告。</translation>
    </message>
    <message>
        <source>The app's log file says why.</source>
        <translation>原因记录在本应用的日志文件中。</translation>
    </message>
    <message>
        <source>Diagnostics report</source>
        <translation>诊断报告</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>No file manager opened, so the report's path was copied: {path}</source>
        <translation>没有打开文件管理器，已复制报告的路径：{path}</translation>
    </message>
</context>
<context>
    <name>FitCell</name>
    <message>
        <source>Recommended</source>
        <translation>推荐</translation>
    </message>
</context>
<context>
    <name>GetModelDialog</name>
    <message>
        <source>Searching for “{text}”…</source>
        <translation>正在搜索“{text}”…</translation>
    </message>
    <message>
        <source>No GGUF repository matches “{text}”. Try fewer or other words, e.g. a model family such as qwen or llama.</source>
        <translation>没有与“{text}”匹配的 GGUF 仓库。请换用更少或其他的关键词，例如 qwen、llama 等模型系列名。</translation>
    </message>
    <message>
        <source>Suggested small models</source>
        <translation>推荐的小模型</translation>
    </message>
    <message>
        <source>Results for “{text}”</source>
        <translation>“{text}”的搜索结果</translation>
    </message>
    <message>
        <source>★ {title}: the suggested size for this computer's memory. Pick a model to see each file's fit.</source>
        <translation>★ {title}：按这台电脑的内存推荐的大小。选择一个模型，查看每个文件是否放得下。</translation>
    </message>
    <message>
        <source>Pick a model to see each file's fit on this computer.</source>
        <translation>选择一个模型，查看每个文件在这台电脑上是否放得下。</translation>
    </message>
    <message>
        <source>Listing the files of {repo}…</source>
        <translation>正在列出 {repo} 的文件…</translation>
    </message>
    <message>
        <source>Files</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Reading each file's header (a few MB, not the file) to judge the fit…</source>
        <translation>正在读取每个文件的文件头（几 MB，而不是整个文件）以判断是否放得下…</translation>
    </message>
    <message>
        <source>Read the headers of {n} of {m} files ({size}) to find the best fit; choose another file to read its header too.</source>
        <translation>为找出最合适的文件，读取了 {m} 个文件中 {n} 个的文件头（{size}）；选择其他文件即可读取它的文件头。</translation>
    </message>
    <message>
        <source>No file here fits this computer with a useful context; a smaller model would.</source>
        <translation>这里没有哪个文件能在这台电脑上以够用的上下文运行；换一个更小的模型可以。</translation>
    </message>
    <message>
        <source>A download is under way in the Model step; one at a time.</source>
        <translation>“模型”步骤中已有一个下载在进行；一次只能下载一个。</translation>
    </message>
    <message>
        <source>Get a model</source>
        <translation>获取模型</translation>
    </message>
    <message>
        <source>Source:</source>
        <translation>来源：</translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <source>hf-mirror.com (mirror)</source>
        <translation>hf-mirror.com（镜像站）</translation>
    </message>
    <message>
        <source>ModelScope</source>
        <translation>魔搭社区（ModelScope）</translation>
    </message>
    <message>
        <source>Token:</source>
        <translation>令牌：</translation>
    </message>
    <message>
        <source>for gated models (optional; kept until the app closes)</source>
        <translation>用于受限模型（可选；仅保留到应用关闭）</translation>
    </message>
    <message>
        <source>Sent only to the source chosen here, never saved.</source>
        <translation>只发送给这里选择的来源，从不保存。</translation>
    </message>
    <message>
        <source>Proxy:</source>
        <translation>代理：</translation>
    </message>
    <message>
        <source>http://host:port — empty: the system's setting</source>
        <translation>http://host:port — 留空：使用系统设置</translation>
    </message>
    <message>
        <source>Every search, header read and download goes through this proxy; it is saved for next time. Use it where the system's proxy is not picked up.</source>
        <translation>每次搜索、文件头读取和下载都经过此代理；它会保存供下次使用。在系统代理未被识别时使用。</translation>
    </message>
    <message>
        <source>Search models, e.g. qwen 7b instruct, or owner/name</source>
        <translation>搜索模型，例如 qwen 7b instruct，或 所有者/名称</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Use the mirror hf-mirror.com</source>
        <translation>使用镜像站 hf-mirror.com</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>GetModelRow</name>
    <message>
        <source>Downloading {name}…</source>
        <translation>正在下载 {name}…</translation>
    </message>
    <message>
        <source>Downloading {name}: {amount}</source>
        <translation>正在下载 {name}：{amount}</translation>
    </message>
    <message>
        <source>Pausing {name}…</source>
        <translation>正在暂停 {name}…</translation>
    </message>
    <message>
        <source>Paused: {name}, {done} of {total} downloaded. Resume continues where it stopped.</source>
        <translation>已暂停：{name}，已下载 {done} / {total}。“继续”会从停下的地方接着下载。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Download of {name} cancelled; its partial file was removed.</source>
        <translation>已取消下载 {name}；未下载完的文件已删除。</translation>
    </message>
    <message>
        <source>The download of {name} stopped.</source>
        <translation>{name} 的下载已停止。</translation>
    </message>
    <message>
        <source>Already on this computer, checked against the Hub's SHA-256: {path}</source>
        <translation>这台电脑上已有此文件，已与 Hub 公布的 SHA-256 核对：{path}</translation>
    </message>
    <message>
        <source>Already on this computer with the same size (the Hub publishes no SHA-256 for it): {path}</source>
        <translation>这台电脑上已有大小相同的此文件（Hub 没有公布它的 SHA-256）：{path}</translation>
    </message>
    <message>
        <source>Downloaded; its SHA-256 matches the Hub's: {path}</source>
        <translation>已下载；其 SHA-256 与 Hub 公布的一致：{path}</translation>
    </message>
    <message>
        <source>Downloaded (the Hub publishes no SHA-256 for it, so only its size was checked): {path}</source>
        <translation>已下载（Hub 没有公布它的 SHA-256，因此只核对了大小）：{path}</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
</context>
<context>
    <name>GpuEngineNotice</name>
    <message>
        <source>What was checked ({count})</source>
        <translation>检查了哪些内容（{count}）</translation>
    </message>
    <message>
        <source>Use the llama-server in {folder} ({backends})</source>
        <translation>使用 {folder} 中的 llama-server（{backends}）</translation>
    </message>
    <message>
        <source>Rebuild the built-in engine with {backend}</source>
        <translation>用 {backend} 重新构建内置引擎</translation>
    </message>
</context>
<context>
    <name>GpuFetchBox</name>
    <message>
        <source>A GPU engine for this card</source>
        <translation>适合这张显卡的 GPU 引擎</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Keep it</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>Look again</source>
        <translation>重新查找</translation>
    </message>
    <message>
        <source>Removing the {label} build…</source>
        <translation>正在删除 {label} 版本…</translation>
    </message>
    <message>
        <source>Starting to get the {label} build…</source>
        <translation>正在开始获取 {label} 版本…</translation>
    </message>
    <message>
        <source>Pausing…</source>
        <translation>正在暂停…</translation>
    </message>
    <message>
        <source>Paused; what was downloaded is kept. Resume continues from there.</source>
        <translation>已暂停；已下载的部分会保留。点“继续”会从那里接着下载。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Cancelled; nothing of the {label} build was kept.</source>
        <translation>已取消；{label} 版本的文件一个也没有保留。</translation>
    </message>
    <message>
        <source>The {label} build could not be removed.</source>
        <translation>无法删除 {label} 版本。</translation>
    </message>
    <message>
        <source>Getting the {label} build stopped.</source>
        <translation>获取 {label} 版本已停止。</translation>
    </message>
    <message>
        <source>The {label} build was removed and its folder deleted.</source>
        <translation>{label} 版本已删除，其文件夹也已删除。</translation>
    </message>
    <message>
        <source>The {label} build is ready.</source>
        <translation>{label} 版本已就绪。</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Get the GPU engine for this card ({label}, {size})</source>
        <translation>获取适合这张显卡的 GPU 引擎（{label}，{size}）</translation>
    </message>
    <message>
        <source>Get the GPU engine for this card ({label})</source>
        <translation>获取适合这张显卡的 GPU 引擎（{label}）</translation>
    </message>
    <message>
        <source>Finding the llama.cpp build that fits this card…</source>
        <translation>正在查找适合这张显卡的 llama.cpp 版本…</translation>
    </message>
    <message>
        <source>It downloads {size} from {host}.</source>
        <translation>需要从 {host} 下载 {size}。</translation>
    </message>
    <message>
        <source>It downloads from {host}.</source>
        <translation>需要从 {host} 下载。</translation>
    </message>
    <message>
        <source>The build is tested on the card before the app uses it.</source>
        <translation>应用使用该版本之前，会先在显卡上测试它。</translation>
    </message>
    <message>
        <source>The {label} build of llama.cpp {tag}, fetched by this app and checked on {device}.</source>
        <translation>llama.cpp {tag} 的 {label} 版本，由本应用下载，并已在 {device} 上检查。</translation>
    </message>
    <message>
        <source>The app uses it now.</source>
        <translation>应用当前正在使用它。</translation>
    </message>
    <message>
        <source>Use it</source>
        <translation>使用它</translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Remove the {label} build? Its folder is deleted: {folder}</source>
        <translation>要删除 {label} 版本吗？其文件夹将被删除：{folder}</translation>
    </message>
    <message>
        <source>The app uses it now; after the removal it uses the built-in engine.</source>
        <translation>应用当前正在使用它；删除后将改用内置引擎。</translation>
    </message>
    <message>
        <source>What was checked ({count})</source>
        <translation>检查了哪些内容（{count}）</translation>
    </message>
</context>
<context>
    <name>HashRow</name>
    <message>
        <source>Expected SHA-256:</source>
        <translation>预期的 SHA-256：</translation>
    </message>
    <message>
        <source>paste the hash from the download page (optional)</source>
        <translation>粘贴下载页面上的校验值（可选）</translation>
    </message>
    <message>
        <source>Check file hash</source>
        <translation>校验文件</translation>
    </message>
    <message>
        <source>Hash check cancelled.</source>
        <translation>校验已取消。</translation>
    </message>
    <message>
        <source>Hash check failed: {error}</source>
        <translation>校验失败：{error}</translation>
    </message>
</context>
<context>
    <name>JobRow</name>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>LocalAccessBox</name>
    <message>
        <source>Other programs on this computer</source>
        <translation>本机上的其他程序</translation>
    </message>
    <message>
        <source>Copy address</source>
        <translation>复制地址</translation>
    </message>
    <message>
        <source>Copy key</source>
        <translation>复制密钥</translation>
    </message>
    <message>
        <source>No key needed: every program on this computer can use the model, web pages open in your browser too. The Settings step can ask for a key again.</source>
        <translation>无需密钥：本机上的每个程序都可以使用该模型，浏览器中打开的网页也可以。可以在“设置”步骤中重新要求密钥。</translation>
    </message>
    <message>
        <source>Programs you run here connect with this address and key. Web pages cannot use the model without the key; it stays the same while this model stays open.</source>
        <translation>你在本机运行的程序使用此地址和密钥连接。没有密钥，网页无法使用该模型；只要这个模型保持打开，密钥就不变。</translation>
    </message>
</context>
<context>
    <name>LocalModels</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>From</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Checks</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Look again</source>
        <translation>重新查找</translation>
    </message>
    <message>
        <source>Add a folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>On this computer (looking…)</source>
        <translation>本机已有的模型（查找中…）</translation>
    </message>
    <message>
        <source>On this computer</source>
        <translation>本机已有的模型</translation>
    </message>
    <message>
        <source>On this computer ({count})</source>
        <translation>本机已有的模型（{count}）</translation>
    </message>
    <message>
        <source>Looking for models other apps downloaded…</source>
        <translation>正在查找其他应用已下载的模型…</translation>
    </message>
    <message>
        <source>No models found from Ollama, LM Studio, Jan, the Hugging Face cache or llama.cpp. Add a folder where you keep models.</source>
        <translation>未在 Ollama、LM Studio、Jan、Hugging Face 缓存或 llama.cpp 中找到模型。请添加您存放模型的文件夹。</translation>
    </message>
    <message>
        <source>Opened where they are, never copied. Full checks run when you open one.</source>
        <translation>就地打开，不会复制。打开时才会进行完整检查。</translation>
    </message>
    <message>
        <source>did not pass</source>
        <translation>未通过</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>Add a folder with models</source>
        <translation>添加存放模型的文件夹</translation>
    </message>
</context>
<context>
    <name>LogPane</name>
    <message>
        <source>Filter lines…</source>
        <translation>筛选日志行…</translation>
    </message>
    <message>
        <source>All lines</source>
        <translation>全部日志行</translation>
    </message>
    <message>
        <source>Warnings and errors</source>
        <translation>警告和错误</translation>
    </message>
    <message>
        <source>Errors only</source>
        <translation>仅错误</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Freeze the view to read; new lines wait until you resume</source>
        <translation>冻结视图以便阅读；新日志行会等到你继续时再显示</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the selected lines, or every shown line when none is selected</source>
        <translation>复制所选的行；未选择时复制所有显示的行</translation>
    </message>
    <message>
        <source>Could not save the log to {path}: {reason}</source>
        <translation>无法把日志保存到 {path}：{reason}</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Open log folder</source>
        <translation>打开日志文件夹</translation>
    </message>
    <message>
        <source>The full log of every run is kept there</source>
        <translation>每次运行的完整日志都保存在那里</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>Paused. New lines waiting: {count}</source>
        <translation>已暂停。等待显示的新日志行：{count}</translation>
    </message>
    <message>
        <source>Save log</source>
        <translation>保存日志</translation>
    </message>
    <message>
        <source>Text files (*.txt *.log)</source>
        <translation>文本文件 (*.txt *.log)</translation>
    </message>
</context>
<context>
    <name>MachinePanel</name>
    <message>
        <source>Could not read this machine's hardware: {error}</source>
        <translation>无法读取本机硬件信息：{error}</translation>
    </message>
    <message>
        <source>Testing the engine on this processor (a few seconds)…</source>
        <translation>正在这台处理器上测试引擎（只需几秒）…</translation>
    </message>
    <message>
        <source>Choose the llama-server program in Settings (Advanced), or use the built-in engine.</source>
        <translation>请在设置（高级）中选择 llama-server 程序，或改用内置引擎。</translation>
    </message>
    <message>
        <source>Looking at this machine…</source>
        <translation>正在查看本机…</translation>
    </message>
    <message>
        <source>{cpu}, {cores} cores · {os}</source>
        <translation>{cpu}，{cores} 核 · {os}</translation>
    </message>
    <message>
        <source>unknown CPU</source>
        <translation>未知 CPU</translation>
    </message>
    <message>
        <source>Memory (RAM)</source>
        <translation>内存（RAM）</translation>
    </message>
    <message>
        <source>in use</source>
        <translation>已使用</translation>
    </message>
    <message>
        <source>{free} free of {total}</source>
        <translation>可用 {free}，共 {total}</translation>
    </message>
    <message>
        <source>No NVIDIA GPU found. That is fine: models run on the processor, only slower.</source>
        <translation>没有找到 NVIDIA 显卡。这没关系：模型会在处理器上运行，只是慢一些。</translation>
    </message>
    <message>
        <source>(Also seen: {others}; not used for acceleration.)</source>
        <translation>（还发现：{others}；不用于加速。）</translation>
    </message>
    <message>
        <source>GPU {index}: {name}</source>
        <translation>GPU {index}：{name}</translation>
    </message>
    <message>
        <source>driver {driver}, CUDA {cuda}</source>
        <translation>驱动 {driver}，CUDA {cuda}</translation>
    </message>
    <message>
        <source>held by: {list}</source>
        <translation>占用者：{list}</translation>
    </message>
    <message>
        <source>this app's server</source>
        <translation>本应用的服务器</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>GGUF Launcher</source>
        <translation>GGUF Launcher</translation>
    </message>
    <message>
        <source>Machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>Chat and logs</source>
        <translation>对话和日志</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Zoom {percent}%</source>
        <translation>缩放 {percent}%</translation>
    </message>
    <message>
        <source>What this computer offers a model: memory, graphics card, notes.</source>
        <translation>本机能为模型提供什么：内存、显卡和注意事项。</translation>
    </message>
    <message>
        <source>Pick a .gguf file; every check on it is listed here.</source>
        <translation>选择一个 .gguf 文件；对它的每项检查都列在这里。</translation>
    </message>
    <message>
        <source>How much context and how many layers on the GPU; the bars show if it fits.</source>
        <translation>上下文多大、放多少层到 GPU；下方的条形图显示能否放得下。</translation>
    </message>
    <message>
        <source>Starts the model so you can chat with it.</source>
        <translation>启动模型，然后就可以和它对话。</translation>
    </message>
    <message>
        <source>Talk to the model, or read what the server says.</source>
        <translation>与模型对话，或查看服务器的输出。</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>The engine was changed in Settings; the next start uses it.</source>
        <translation>已在设置中更换引擎；下次启动时生效。</translation>
    </message>
    <message>
        <source>The server keeps its settings until you press Restart.</source>
        <translation>服务器会沿用原来的设置，直到你按下“重启”。</translation>
    </message>
    <message>
        <source>Stopping the server before closing…</source>
        <translation>正在停止服务器，然后关闭…</translation>
    </message>
    <message>
        <source>Close GGUF Launcher?</source>
        <translation>关闭 GGUF Launcher？</translation>
    </message>
    <message>
        <source>A reply is still being written. Closing stops it and the server. Close anyway?</source>
        <translation>回复还在生成中。关闭会停止回复和服务器。仍要关闭吗？</translation>
    </message>
</context>
<context>
    <name>ModelFiles</name>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Quantization</source>
        <translation>量化</translation>
    </message>
    <message>
        <source>Fit on this computer</source>
        <translation>在这台电脑上</translation>
    </message>
    <message>
        <source>This repository has no GGUF model files.</source>
        <translation>这个仓库里没有 GGUF 模型文件。</translation>
    </message>
    <message>
        <source>It also has a vision projector ({name}); Download fetches the model only.</source>
        <translation>它还有一个视觉投影文件（{name}）；“下载”只获取模型本身。</translation>
    </message>
    <message>
        <source>Only {have} of its {count} parts are in the repository: it cannot be used.</source>
        <translation>仓库中只有它 {count} 个分卷中的 {have} 个：无法使用。</translation>
    </message>
    <message>
        <source>Reading its header (a few MB, not the file) to judge the fit…</source>
        <translation>正在读取它的文件头（几 MB，而不是整个文件）以判断是否放得下…</translation>
    </message>
</context>
<context>
    <name>ModelPanel</name>
    <message>
        <source>Open a GGUF model…</source>
        <translation>打开 GGUF 模型…</translation>
    </message>
    <message>
        <source>Recent</source>
        <translation>最近</translation>
    </message>
    <message>
        <source>Try the demo model</source>
        <translation>试用演示模型</translation>
    </message>
    <message>
        <source>Get a model…</source>
        <translation>获取模型…</translation>
    </message>
    <message>
        <source>Search Hugging Face (or its mirror) for a model that fits this computer and download it.</source>
        <translation>在 Hugging Face（或其镜像站）上搜索适合这台电脑的模型并下载。</translation>
    </message>
    <message>
        <source>{name} (damaged)</source>
        <translation>{name}（已损坏）</translation>
    </message>
    <message>
        <source>Open a GGUF model</source>
        <translation>打开 GGUF 模型</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF 模型 (*.gguf);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Checking {name}…</source>
        <translation>正在检查 {name}…</translation>
    </message>
    <message>
        <source>Copying the model to a folder with a plain path…</source>
        <translation>正在把模型复制到路径简单的文件夹…</translation>
    </message>
    <message>
        <source>Could not copy the model: {error}</source>
        <translation>无法复制模型：{error}</translation>
    </message>
</context>
<context>
    <name>ModelSwitch</name>
    <message>
        <source>Another model</source>
        <translation>另一个模型</translation>
    </message>
    <message>
        <source>The server is still running {old}. Restart it with {new}?</source>
        <translation>服务器仍在运行 {old}。要用 {new} 重新启动它吗？</translation>
    </message>
    <message>
        <source>Until it restarts, the chat is answered by {old}.</source>
        <translation>在重新启动之前，聊天仍由 {old} 回答。</translation>
    </message>
    <message>
        <source>Restart</source>
        <translation>重启</translation>
    </message>
    <message>
        <source>Stop it</source>
        <translation>停止它</translation>
    </message>
    <message>
        <source>Keep it running</source>
        <translation>保持运行</translation>
    </message>
    <message>
        <source>The server restarts with {new} once its checks are done.</source>
        <translation>{new} 检查完成后，服务器将用它重新启动。</translation>
    </message>
    <message>
        <source>{new} did not pass its checks, so the server for {old} was stopped.</source>
        <translation>{new} 未通过检查，因此 {old} 的服务器已停止。</translation>
    </message>
    <message>
        <source>The server keeps running {old}; each answer in the chat names its model.</source>
        <translation>服务器继续运行 {old}；聊天中的每条回答都会注明其模型。</translation>
    </message>
</context>
<context>
    <name>ParamsBox</name>
    <message>
        <source>System prompt:</source>
        <translation>系统提示词：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Top P:</source>
        <translation>Top P：</translation>
    </message>
    <message>
        <source>Max answer tokens:</source>
        <translation>回答最多词元数：</translation>
    </message>
    <message>
        <source>Repeat penalty:</source>
        <translation>重复惩罚：</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>随机种子：</translation>
    </message>
    <message>
        <source>Optional: how the assistant should behave</source>
        <translation>可选：助手应当如何表现</translation>
    </message>
    <message>
        <source>Higher is more varied, lower is more focused</source>
        <translation>越高越多样，越低越专注</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Automatic: 512, or a quarter of the context if that is smaller</source>
        <translation>自动：512，若上下文的四分之一更小则取后者</translation>
    </message>
    <message>
        <source>Random</source>
        <translation>随机</translation>
    </message>
</context>
<context>
    <name>PreflightDialog</name>
    <message>
        <source>Before the talk</source>
        <translation>演讲之前</translation>
    </message>
    <message>
        <source>Everything a demo needs, checked on this computer now.</source>
        <translation>演示所需的一切，现在就在这台电脑上检查。</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>再检查一次</translation>
    </message>
    <message>
        <source>Checking… (a test question is asked to the server)</source>
        <translation>正在检查…（会向服务器提一个测试问题）</translation>
    </message>
</context>
<context>
    <name>PresenterMode</name>
    <message>
        <source>The checklist could not run; the app's log file says why.</source>
        <translation>检查清单无法运行；原因记录在本应用的日志文件中。</translation>
    </message>
    <message>
        <source>Recovering: restarting the server with the last settings that worked…</source>
        <translation>正在恢复：用上次可用的设置重启服务器…</translation>
    </message>
    <message>
        <source>Recovered in {s} s; the last question is asked again.</source>
        <translation>已在 {s} 秒内恢复；上一个问题已重新提出。</translation>
    </message>
    <message>
        <source>Recovered in {s} s.</source>
        <translation>已在 {s} 秒内恢复。</translation>
    </message>
</context>
<context>
    <name>ProbeBox</name>
    <message>
        <source>Find safe settings</source>
        <translation>查找安全设置</translation>
    </message>
    <message>
        <source>Starts the model a few times with different settings and keeps the largest one that really works.</source>
        <translation>用不同的设置启动模型几次，保留真正可用的最大设置。</translation>
    </message>
    <message>
        <source>Tests longer contexts too, up to what the model was trained for, and keeps the longest that fits.</source>
        <translation>也测试更长的上下文（最多到模型训练时的长度），并保留能放下的最长上下文。</translation>
    </message>
    <message>
        <source>(the same settings again, to be sure)</source>
        <translation>（同样的设置再试一次，以确认）</translation>
    </message>
    <message>
        <source>{where}, {ctx} tokens</source>
        <translation>{where}，{ctx} 个词元</translation>
    </message>
    <message>
        <source>{layers} GPU layers, {ctx} tokens</source>
        <translation>{layers} 层 GPU，{ctx} 个词元</translation>
    </message>
    <message>
        <source>works (loaded in {s} s, peak RAM {rss})</source>
        <translation>可用（加载 {s} 秒，内存峰值 {rss}）</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>{gen} tokens/s writing</source>
        <translation>生成每秒 {gen} 个词元</translation>
    </message>
    <message>
        <source>{pp} tokens/s reading the prompt</source>
        <translation>读取提示每秒 {pp} 个词元</translation>
    </message>
    <message>
        <source>As much context as fits (up to {ctx} tokens)</source>
        <translation>尽可能多的上下文（最多 {ctx} 个词元）</translation>
    </message>
    <message>
        <source>Testing settings with real loads of the model…</source>
        <translation>正在用真实加载测试设置…</translation>
    </message>
    <message>
        <source>Cancelling; stopping the test server…</source>
        <translation>正在取消；正在停止测试服务器…</translation>
    </message>
    <message>
        <source>Cancelled. Your settings were not changed.</source>
        <translation>已取消。你的设置没有改变。</translation>
    </message>
    <message>
        <source>The test could not run: {error}</source>
        <translation>测试无法运行：{error}</translation>
    </message>
    <message>
        <source>(Cached result from an earlier test with the same settings.)</source>
        <translation>（这是之前用相同设置测试的缓存结果。）</translation>
    </message>
    <message>
        <source>Applied.</source>
        <translation>已应用。</translation>
    </message>
    <message>
        <source>Last measured on {when} (cached): {where}, {ctx} tokens.</source>
        <translation>上次测量于 {when}（已缓存）：{where}，{ctx} 个词元。</translation>
    </message>
    <message>
        <source>Last measured on {when} (cached): {layers} GPU layers, {ctx} tokens.</source>
        <translation>上次测量于 {when}（缓存）：{layers} 层 GPU，{ctx} 个词元。</translation>
    </message>
    <message>
        <source>Not measured yet. The numbers above are an estimate; "Find safe settings" proves them with real test loads.</source>
        <translation>尚未测量。上面的数字是估算；“查找安全设置”会用真实的测试加载来验证。</translation>
    </message>
    <message>
        <source>Superseded: the settings changed after this test ({changes}).</source>
        <translation>已被取代：此次测试之后设置已更改（{changes}）。</translation>
    </message>
    <message>
        <source>context size</source>
        <translation>上下文大小</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source>layers with experts on the processor</source>
        <translation>专家放在处理器上的层数</translation>
    </message>
</context>
<context>
    <name>ProblemView</name>
    <message>
        <source>Next step: {fix}</source>
        <translation>下一步：{fix}</translation>
    </message>
    <message>
        <source>Copy to a safe folder</source>
        <translation>复制到安全的文件夹</translation>
    </message>
    <message>
        <source>Open the first part</source>
        <translation>打开第一部分</translation>
    </message>
    <message>
        <source>Rebuild the engine for this processor</source>
        <translation>为这台处理器重新构建引擎</translation>
    </message>
    <message>
        <source>Use the llama-server engine</source>
        <translation>改用 llama-server 引擎</translation>
    </message>
    <message>
        <source>Use the built-in engine</source>
        <translation>改用内置引擎</translation>
    </message>
    <message>
        <source>Test the engine</source>
        <translation>测试引擎</translation>
    </message>
    <message>
        <source>Hide details</source>
        <translation>隐藏详情</translation>
    </message>
    <message>
        <source>Show details</source>
        <translation>显示详情</translation>
    </message>
</context>
<context>
    <name>RebuildBox</name>
    <message>
        <source>Cancelling the rebuild…</source>
        <translation>正在取消重新构建…</translation>
    </message>
    <message>
        <source>The built-in engine was rebuilt with {backend} for the graphics card and passed its test.</source>
        <translation>内置引擎已用 {backend} 为显卡重新构建，并通过了测试。</translation>
    </message>
    <message>
        <source>The engine was rebuilt for this processor and passed its test.</source>
        <translation>引擎已为这台处理器重新构建，并通过了测试。</translation>
    </message>
    <message>
        <source>Rebuilding the engine: testing which instructions this processor runs…</source>
        <translation>正在重新构建引擎：正在测试这台处理器能运行哪些指令…</translation>
    </message>
    <message>
        <source>Rebuilding the engine for this processor: {percent} %</source>
        <translation>正在为这台处理器重新构建引擎：{percent} %</translation>
    </message>
    <message>
        <source>Rebuilding the engine for this processor…</source>
        <translation>正在为这台处理器重新构建引擎…</translation>
    </message>
    <message>
        <source>Rebuilding the engine: testing the new engine on this processor…</source>
        <translation>正在重新构建引擎：正在这台处理器上测试新引擎…</translation>
    </message>
    <message>
        <source>Rebuilding the engine for this processor (a few minutes)…</source>
        <translation>正在为这台处理器重新构建引擎（需要几分钟）…</translation>
    </message>
    <message>
        <source>Rebuilding the built-in engine with {backend} for the graphics card: {percent} % (this can take half an hour)</source>
        <translation>正在用 {backend} 为显卡重新构建内置引擎：{percent} %（可能需要半小时）</translation>
    </message>
    <message>
        <source>Rebuilding the built-in engine: testing the new engine…</source>
        <translation>正在重新构建内置引擎：正在测试新引擎…</translation>
    </message>
    <message>
        <source>Rebuilding the built-in engine with {backend} for the graphics card (this can take half an hour)…</source>
        <translation>正在用 {backend} 为显卡重新构建内置引擎（可能需要半小时）…</translation>
    </message>
    <message>
        <source>The engine could not be rebuilt: {error}</source>
        <translation>无法重新构建引擎：{error}</translation>
    </message>
</context>
<context>
    <name>SavedPicker</name>
    <message>
        <source>Saved conversations ({count})</source>
        <translation>已保存的对话（{count}）</translation>
    </message>
    <message>
        <source>(untitled)</source>
        <translation>（无标题）</translation>
    </message>
    <message>
        <source>no model yet</source>
        <translation>尚无模型</translation>
    </message>
    <message>
        <source>{count} messages</source>
        <translation>{count} 条消息</translation>
    </message>
    <message>
        <source>Open a saved conversation</source>
        <translation>打开已保存的对话</translation>
    </message>
</context>
<context>
    <name>ServerControl</name>
    <message>
        <source>Open a model that passes its checks first.</source>
        <translation>请先打开一个通过检查的模型。</translation>
    </message>
    <message>
        <source>The fix is in the settings now; the server restarts with them.</source>
        <translation>修复已写入设置；服务器将以这些设置重新启动。</translation>
    </message>
    <message>
        <source>The engine was rebuilt; the server uses it after its next restart.</source>
        <translation>引擎已重新构建；服务器下次重启后使用它。</translation>
    </message>
</context>
<context>
    <name>ServerPanel</name>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>Starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>Loading model</source>
        <translation>正在加载模型</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation>正在停止</translation>
    </message>
    <message>
        <source>Crashed</source>
        <translation>已崩溃</translation>
    </message>
    <message>
        <source>Restarting</source>
        <translation>正在重启</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>启动</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Restart</source>
        <translation>重启</translation>
    </message>
    <message>
        <source>Recover</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Restart with the last settings that worked and ask the last question again</source>
        <translation>用上次可用的设置重启，并重新提出上一个问题</translation>
    </message>
    <message>
        <source>Uptime:</source>
        <translation>运行时间：</translation>
    </message>
    <message>
        <source>Restarts:</source>
        <translation>重启次数：</translation>
    </message>
    <message>
        <source>Address:</source>
        <translation>地址：</translation>
    </message>
    <message>
        <source>No web browser opened, so the address {url} was copied: paste it into one.</source>
        <translation>没有打开网页浏览器，所以已复制地址 {url}：请把它粘贴到浏览器中。</translation>
    </message>
    <message>
        <source>Open a model that passes its checks first.</source>
        <translation>请先打开一个通过检查的模型。</translation>
    </message>
    <message>
        <source>The action failed: {error}</source>
        <translation>操作失败：{error}</translation>
    </message>
</context>
<context>
    <name>SettingsPanel</name>
    <message>
        <source>Context (tokens)</source>
        <translation>上下文（词元）</translation>
    </message>
    <message>
        <source>How much text the model keeps in mind at once. More context needs more memory.</source>
        <translation>模型一次能记住多少文字。上下文越大，需要的内存越多。</translation>
    </message>
    <message>
        <source>Layers on the GPU</source>
        <translation>放到 GPU 的层数</translation>
    </message>
    <message>
        <source>Parallel requests</source>
        <translation>并行请求数</translation>
    </message>
    <message>
        <source>Each parallel request gets its own share of the context.</source>
        <translation>每个并行请求各占一份上下文。</translation>
    </message>
    <message>
        <source>Use these</source>
        <translation>使用这些</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>Workers (other computers)</source>
        <translation>工作机（其他电脑）</translation>
    </message>
    <message>
        <source>Let other programs on this computer use the server without a key</source>
        <translation>允许本机上的其他程序无需密钥使用服务器</translation>
    </message>
    <message>
        <source>Off: the server wants a key the app makes for it, so web pages open in your browser cannot use the model. The Server step shows the key for programs you run. On: any program on this computer can connect, web pages too.</source>
        <translation>关闭：服务器需要程序为它生成的密钥，因此浏览器中打开的网页无法使用该模型。“服务器”步骤会显示供你运行的程序使用的密钥。打开：本机上的任何程序都可以连接，网页也可以。</translation>
    </message>
    <message>
        <source>Command:</source>
        <translation>命令：</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>no GPU: the processor does the work</source>
        <translation>没有 GPU：由处理器完成计算</translation>
    </message>
    <message>
        <source>all {n}</source>
        <translation>全部 {n} 层</translation>
    </message>
    <message>
        <source>{n} of {top}</source>
        <translation>{n} / {top} 层</translation>
    </message>
</context>
<context>
    <name>ShareBox</name>
    <message>
        <source>Share with other devices on this network</source>
        <translation>与本网络中的其他设备共享</translation>
    </message>
    <message>
        <source>This computer only</source>
        <translation>仅本机</translation>
    </message>
    <message>
        <source>All networks of this computer</source>
        <translation>本机的所有网络</translation>
    </message>
    <message>
        <source>Only the network of {address}</source>
        <translation>仅 {address} 所在的网络</translation>
    </message>
    <message>
        <source>Port other devices connect to</source>
        <translation>其他设备连接的端口</translation>
    </message>
    <message>
        <source>Copy key</source>
        <translation>复制密钥</translation>
    </message>
    <message>
        <source>Keep it on this computer</source>
        <translation>只在本机共享</translation>
    </message>
    <message>
        <source>Copy the key and give it to the other device (it is never shown in full); turning sharing off and on again makes a new one.</source>
        <translation>复制密钥并提供给其他设备（密钥从不完整显示）；关闭再重新打开共享会生成新密钥。</translation>
    </message>
    <message>
        <source>Start the model first; it is shared as soon as it runs.</source>
        <translation>请先启动模型；它一运行就会被共享。</translation>
    </message>
</context>
<context>
    <name>StaleServersBanner</name>
    <message>
        <source>Could not stop process %1; close it in your task manager.</source>
        <translation>无法停止进程 %1；请在任务管理器中关闭它。</translation>
    </message>
    <message>
        <source>Stopped. Their memory and ports are free again.</source>
        <translation>已停止。它占用的内存和端口已释放。</translation>
    </message>
    <message>
        <source>A model server from an earlier session is still running (process %1). It holds memory and may hold the port, so a new start can fail.</source>
        <translation>上次会话留下的模型服务器仍在运行（进程 %1）。它占用着内存，可能还占用端口，新的启动可能因此失败。</translation>
    </message>
    <message>
        <source>Stop it</source>
        <translation>停止它</translation>
    </message>
</context>
<context>
    <name>SupervisorBridge</name>
    <message>
        <source>… {n} earlier lines skipped here (the log file has them all)</source>
        <translation>… 此处略过了之前的 {n} 行（日志文件中有完整内容）</translation>
    </message>
</context>
<context>
    <name>Transcript</name>
    <message>
        <source>thinking…</source>
        <translation>思考中…</translation>
    </message>
    <message>
        <source>thinking… {seconds} s</source>
        <translation>思考中… {seconds} 秒</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>not answered yet</source>
        <translation>尚未回答</translation>
    </message>
    <message>
        <source>not answered</source>
        <translation>未回答</translation>
    </message>
    <message>
        <source>cut off</source>
        <translation>被截断</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>first token after {seconds:.2f} s</source>
        <translation>首个词元用时 {seconds:.2f} 秒</translation>
    </message>
    <message>
        <source>{rate:.1f} tokens/s</source>
        <translation>{rate:.1f} 词元/秒</translation>
    </message>
    <message>
        <source>Assistant · {model}</source>
        <translation>助手 · {model}</translation>
    </message>
    <message>
        <source>{problem} (Solved then; the server has been stopped since.)</source>
        <translation>{problem}（当时已解决；此后服务器已停止。）</translation>
    </message>
    <message>
        <source>{problem} (Solved: the server is running again.)</source>
        <translation>{problem}（已解决：服务器已重新运行。）</translation>
    </message>
</context>
<context>
    <name>WindowMenus</name>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open a GGUF model…</source>
        <translation>打开 GGUF 模型(&amp;O)…</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>最近的模型</translation>
    </message>
    <message>
        <source>Try the &amp;demo model</source>
        <translation>试用演示模型(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Server</source>
        <translation>服务器(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Start the server</source>
        <translation>启动服务器</translation>
    </message>
    <message>
        <source>Stop the server</source>
        <translation>停止服务器</translation>
    </message>
    <message>
        <source>Restart the server</source>
        <translation>重启服务器</translation>
    </message>
    <message>
        <source>Find safe settings</source>
        <translation>查找安全设置</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Go to the message box</source>
        <translation>转到消息输入框</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>放大</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>缩小</translation>
    </message>
    <message>
        <source>Actual size</source>
        <translation>实际大小</translation>
    </message>
    <message>
        <source>Recover (last settings that worked, last question again)</source>
        <translation>恢复（上次可用的设置，重新提出上一个问题）</translation>
    </message>
    <message>
        <source>Presenter mode</source>
        <translation>演示模式</translation>
    </message>
    <message>
        <source>Before the talk: checklist…</source>
        <translation>演讲之前：检查清单…</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>Open the log folder</source>
        <translation>打开日志文件夹</translation>
    </message>
    <message>
        <source>Save a diagnostics report…</source>
        <translation>保存诊断报告…</translation>
    </message>
    <message>
        <source>About GGUF Launcher</source>
        <translation>关于 GGUF Launcher</translation>
    </message>
    <message>
        <source>GGUF Launcher {version}
Runs a local GGUF model with llama.cpp: checks the file, plans the memory, measures safe settings, keeps the server running and lets you chat with it.</source>
        <translation>GGUF Launcher {version}
用 llama.cpp 运行本地 GGUF 模型：检查文件、估算内存、实测安全设置、保持服务器运行，并让你与模型对话。</translation>
    </message>
</context>
<context>
    <name>WorkerDevices</name>
    <message>
        <source>Other computers (workers)</source>
        <translation>其他电脑（工作机）</translation>
    </message>
</context>
<context>
    <name>WorkersBox</name>
    <message>
        <source>Other computers (workers) that lend their memory to this model</source>
        <translation>把内存借给这个模型的其他电脑（工作机）</translation>
    </message>
    <message>
        <source>Address, e.g. 192.168.1.20:50052</source>
        <translation>地址，例如 192.168.1.20:50052</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>再检查一次</translation>
    </message>
    <message>
        <source>Stop sharing</source>
        <translation>停止共享</translation>
    </message>
    <message>
        <source>Share this computer as a worker</source>
        <translation>将这台电脑共享为工作机</translation>
    </message>
    <message>
        <source>Checking the workers…</source>
        <translation>正在检查工作机…</translation>
    </message>
    <message>
        <source>Sharing now.</source>
        <translation>正在共享。</translation>
    </message>
    <message>
        <source>The worker did not start.</source>
        <translation>工作机没有启动。</translation>
    </message>
</context>
</TS>