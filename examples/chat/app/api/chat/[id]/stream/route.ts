import { chat } from '../../../../../lib/chat';

export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return (await chat()).GET(request, (await params).id);
}
