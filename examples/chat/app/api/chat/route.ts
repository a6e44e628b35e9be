import { chat } from '../../../lib/chat';

export async function POST(request: Request): Promise<Response> {
  return (await chat()).POST(request);
}
