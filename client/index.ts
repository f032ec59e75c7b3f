/**
 * A typed client of the flash-sale engine for shop code (client/README.md): the generated types of its
 * OpenAPI document, calls through openapi-fetch, helpers for the sale, order and operator flows, and the
 * verification of the engine's webhooks.
 */
export type { ApiFailure, Credential, EngineApi, EngineOptions, Result } from "./http";
export { engineApi } from "./http";
export type { OperatorClient, OperatorSale, SaleDefinition, SaleStats } from "./operator";
export { operatorClient } from "./operator";
export type { components, paths } from "./schema";
export type { BuyAccepted, Checkout, Order, OrderStatus, Sale, ShopperClient } from "./shopper";
export { shopperClient } from "./shopper";
export type { WebhookEvent, WebhookVerdict } from "./webhooks";
export { verifyWebhook } from "./webhooks";
