// The core's view types, as they cross the bridge (generated into ../bindings).

export type { DisplayMode, DownloadFile, DownloadOffer, ViewCall, ViewEvent, ViewOpened, ViewReply } from "../bindings";
